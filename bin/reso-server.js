#!/usr/bin/env node
'use strict';
// The command line (also what `npm start` runs). First, in the primary process only (a cluster's workers run this
// file too), the project is made fresh or the command refused (scripts/freshness.js): a dictionary changed since
// generated/ was generated, or sources changed since dist/ was built, are regenerated and rebuilt in development,
// and refused with one line under NODE_ENV=production. Then the compiled CLI runs in this process; its failures
// print one line and exit with the code that names them (src/exit-codes.ts).
const argv = process.argv.slice(2);
if (require('node:cluster').isPrimary) {
  const root = require('node:path').resolve(__dirname, '..');
  const stale = require('../scripts/freshness.js').ensureFresh(root, { production: process.env.NODE_ENV === 'production', command: argv[0] });
  if (stale) {
    console.error(`reso-server: ${stale.line}`);
    process.exit(stale.code);
  }
}
require('../dist/src/cli/main.js').run(argv);
