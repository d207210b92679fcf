'use strict';
/**
 * Is what would run the model the dictionary describes, compiled from the sources as they are now? Asked by
 * bin/reso-server.js (so by `npm start` and every command) and by scripts/dev.js, before anything compiled is
 * loaded: plain JavaScript, and cheap, since a warm start asks it too (a few milliseconds: docs/development.md "Working on it").
 *
 * Two questions, each about a project folder `root` (so that tests can ask them of a small folder of their own):
 * - the model: generated/dictionary.sha256, which the generator writes, holds the SHA-256 of the dictionary's
 *   bytes and the dictionary's path. The file at that path is hashed now and compared: a hash, not file times,
 *   which a git checkout makes all alike; that path, not the default, since `generate --dictionary` may have read
 *   another file. No file there (an installed package without csdl/): nothing to compare.
 * - the build: dist/.build-stamp, put in place last by a complete build, carries the time the build began and a
 *   digest of the sources' contents as it began (so a file saved while the compiler ran is seen as changed). The
 *   build is fresh when the stamp is newer than every file and folder of the sources; when one is as new or newer,
 *   the digest decides, so a regeneration that wrote the same bytes, or a copy that did not keep file times, is no
 *   reason to build.
 */
const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, renameSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const { join, relative, resolve, sep } = require('node:path');

/** What dist/ is compiled or copied from. */
const SOURCES = ['src', 'generated', 'codegen', 'tsconfig.json'];
/** Files of the sources the build reads (others, such as an editor's swap files, change no build). */
const BUILD_INPUT = /^[^.].*\.(ts|json|xml|html|css)$/;
const STAMP = 'dist/.build-stamp';
/** The stamp of a build in progress: it becomes STAMP when the build completes. */
const BEGUN = 'dist/.build-begun';
const RECORD = 'generated/dictionary.sha256';
const DEFAULT_DICTIONARY = 'csdl/reso-dictionary.xml';
/** src/errors/operator-error.ts's codes (this runs before that is compiled): a stale installation is configuration. */
const EXIT = { failure: 1, usage: 2 };

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const shown = (root, path) => relative(root, path).split(sep).join('/');

/** The dictionary generated/ records, as { path (from root), sha256 }; undefined if it records none. */
function recordedDictionary(root) {
  const record = join(root, RECORD);
  if (!existsSync(record)) return undefined;
  const line = readFileSync(record, 'utf8').split('\n').find((l) => /^[0-9a-f]{64} {2}\S/.test(l));
  return line ? { sha256: line.slice(0, 64), path: line.slice(66) } : undefined;
}

/**
 * Why generated/ is not what its dictionary gives, as { dictionary: the file to generate from, reason }; undefined
 * when it is, or when there is no dictionary to compare with.
 */
function dictionaryChange(root) {
  const recorded = recordedDictionary(root);
  const path = resolve(root, recorded ? recorded.path : DEFAULT_DICTIONARY);
  if (!existsSync(path)) return undefined;
  const name = shown(root, path);
  if (!recorded) return { dictionary: path, reason: `generated/ does not record the dictionary it was generated from (${RECORD})` };
  if (sha256(readFileSync(path)) === recorded.sha256) return undefined;
  return { dictionary: path, reason: `${name} changed after generated/ was generated from it` };
}

/** The newest change under `path` (a file's or a folder's: adding or removing a file changes its folder), as { path, ms }. */
function newestChange(path) {
  const stat = statSync(path);
  let newest = { path, ms: stat.mtimeMs };
  if (!stat.isDirectory()) return newest;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (!entry.isDirectory() && !BUILD_INPUT.test(entry.name)) continue;
    const inner = newestChange(join(path, entry.name));
    if (inner.ms > newest.ms) newest = inner;
  }
  return newest;
}

/** The files the build reads, by path from root, sorted. */
function buildInputs(root, path = root, into = []) {
  for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const inner = join(path, entry.name);
    if (entry.isDirectory()) buildInputs(root, inner, into);
    else if (BUILD_INPUT.test(entry.name)) into.push(shown(root, inner));
  }
  return into;
}

/** A digest of the sources' contents; the dictionary record is left out, as no build reads it. */
function sourcesDigest(root) {
  const hash = createHash('sha256');
  for (const source of SOURCES.filter((s) => existsSync(join(root, s)))) {
    const files = statSync(join(root, source)).isDirectory() ? buildInputs(root, join(root, source)) : [source];
    for (const file of files.filter((f) => f !== RECORD)) hash.update(`${file}\0`).update(sha256(readFileSync(join(root, file))));
  }
  return hash.digest('hex');
}

/**
 * A build's first step (package.json's build script): the stamp of a build in progress, dated before any source is
 * read (file times come from the kernel's clock, so its time is taken from the file, not from Date).
 */
function beginBuild(root) {
  const begun = join(root, BEGUN);
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(begun, '');
  const { atime, mtime } = statSync(begun);
  writeFileSync(begun, `${JSON.stringify({ begun: mtime.toISOString(), sources: sourcesDigest(root) })}\n`);
  utimesSync(begun, atime, mtime);
}

/** A complete build's last step (src/build/finish-build.ts): the stamp of the build in progress becomes the stamp. */
function finishBuild(root) {
  if (!existsSync(join(root, BEGUN))) beginBuild(root);
  renameSync(join(root, BEGUN), join(root, STAMP));
}

/** Stamps dist/ as built from the sources as they are now (a project copy in the tests). */
function writeStamp(root) {
  beginBuild(root);
  finishBuild(root);
}

/**
 * Why dist/ is not built from the sources as they are now, as { reason }; undefined when it is. With `renewStamp`
 * (development), a stamp found older than sources that did not change is renewed, so the next start is fast again.
 */
function buildChange(root, { renewStamp = false } = {}) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return { reason: 'dist/ has not been built' };
  const built = statSync(stamp).mtimeMs;
  const newest = SOURCES.filter((s) => existsSync(join(root, s))).map((s) => newestChange(join(root, s)))
    .reduce((a, b) => (b.ms > a.ms ? b : a), { path: undefined, ms: -Infinity });
  // As new counts: a source saved in the kernel clock's tick the build began in may not have been read.
  if (newest.path === undefined || newest.ms < built) return undefined;
  let recorded;
  try { recorded = JSON.parse(readFileSync(stamp, 'utf8')).sources; } catch { recorded = undefined; }
  if (recorded !== sourcesDigest(root)) return { reason: `dist/ is older than its sources (${shown(root, newest.path)} changed after the last build)` };
  // Renewed to just after the newest source's time, not to the clock's: file times come from the kernel's coarser
  // clock, so a change made just after a renewal to "now" could carry an older time than the stamp and go unseen.
  const renewed = (Math.ceil(newest.ms) + 1) / 1000;
  if (renewStamp) utimesSync(stamp, renewed, renewed);
  return undefined;
}

/** The npm commands that make each part fresh again. */
const regenerate = (dictionary) => ['run', 'generate', '--', '--dictionary', dictionary];
const rebuild = () => ['run', 'build'];

/**
 * Makes the project fresh before a command runs, or says why it will not: in development (`production` false) it
 * regenerates and rebuilds what is stale, its output on stderr (stdout is the command's); in production it changes
 * nothing. Returns undefined when the command may run, else { line, code } for bin/reso-server.js to print and
 * exit with. The commands `generate` and `init` are never held up: regenerating is what they do, and they must run
 * when generated/ does not compile (they run the generator dist/ holds; `npm run generate` compiles the generator
 * first, and init runs it and the build itself).
 */
function ensureFresh(root, { production, command }) {
  if (command === 'generate' || command === 'init') return undefined;
  const model = dictionaryChange(root);
  if (production) {
    if (model) return refusal(`${model.reason}: run npm run generate${model.dictionary === resolve(root, DEFAULT_DICTIONARY) ? '' : ` -- --dictionary ${shown(root, model.dictionary)}`}, then npm run build`);
    const build = buildChange(root);
    return build && refusal(`${build.reason}: run npm run build`);
  }
  if (model) {
    const failed = runNpm(root, regenerate(model.dictionary), `${model.reason}: regenerating`);
    if (failed) return failed;
  }
  const build = buildChange(root, { renewStamp: true });
  return build ? runNpm(root, rebuild(), `${build.reason}: building`) : undefined;
}

function refusal(line) {
  return { line: `${line} (NODE_ENV=production never regenerates or builds at start)`, code: EXIT.usage };
}

function runNpm(root, args, why) {
  process.stderr.write(`reso-server: ${why} (npm ${args.join(' ')}; NODE_ENV=production would refuse instead)\n`);
  const npm = spawnSync('npm', args, { cwd: root, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' });
  if (npm.status === 0) return undefined;
  const how = npm.error ? npm.error.message : `exit code ${npm.status ?? npm.signal}`;
  return { line: `npm ${args.join(' ')} failed (${how}): correct what it printed above, then start again`, code: EXIT.failure };
}

module.exports = {
  SOURCES, STAMP, RECORD, DEFAULT_DICTIONARY, EXIT,
  recordedDictionary, dictionaryChange, buildChange, sourcesDigest, beginBuild, finishBuild, writeStamp, ensureFresh, regenerate, rebuild,
};

// `node scripts/freshness.js begin-build`: the build script's first step.
if (require.main === module && process.argv[2] === 'begin-build') beginBuild(resolve(__dirname, '..'));
