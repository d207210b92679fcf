#!/usr/bin/env node
'use strict';
// The compiled CLI; `npm install` builds it (the prepare script). Failures print one line and exit with the code
// that names them (src/exit-codes.ts).
require('../dist/src/cli.js').run(process.argv.slice(2));
