#!/usr/bin/env node
'use strict';
// The compiled CLI; `npm install` builds it (the prepare script).
require('../dist/src/cli.js').main(process.argv.slice(2)).then(
  (code) => { if (code !== undefined) process.exitCode = code; },
  (e) => { console.error(`reso-server: ${e.message}`); process.exit(1); },
);
