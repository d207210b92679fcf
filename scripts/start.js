#!/usr/bin/env node
'use strict';
/**
 * `npm start`: serve, building first only when dist/ is missing or older than what the server is compiled
 * from, so a warm start does not spend seconds in the compiler. One process: the check, then the compiled CLI
 * in-process (a second node process and npm lifecycle step cost more than the check). Plain JavaScript, as
 * it runs before any build. Stale means some file or folder under the sources changed after the last
 * complete build (the stamp the build writes last), including a file added or removed (its folder's time changes).
 */
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join, resolve } = require('node:path');

/** What `dist/src/cli.js` is compiled or copied from. */
const SOURCES = ['src', 'generated', 'codegen', 'tsconfig.json'];
const STAMP = 'dist/.build-stamp';

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stat.mtimeMs);
}

function isStale(root) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return SOURCES.some((source) => existsSync(join(root, source)) && newestChange(join(root, source)) > built);
}

if (require.main === module) {
  const root = resolve(__dirname, '..');
  if (isStale(root)) {
    console.log('dist/ is missing or older than the sources: building');
    const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
  require(join(root, 'bin/reso-server.js'));
}

module.exports = { isStale, SOURCES, STAMP };
