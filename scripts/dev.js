#!/usr/bin/env node
'use strict';
/**
 * `npm run dev`: the server, regenerated (when the dictionary or the generator changed), rebuilt and restarted
 * on every change of csdl/, src/, codegen/ or tsconfig.json. What is stale is decided as at every start
 * (scripts/freshness.js); a change that leaves the build as it was restarts nothing. A failed generate or build
 * prints its error and leaves the last good server running (or none), saying so; the next change tries again.
 * Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the server (it drains as it does on SIGTERM, for at most
 * SHUTDOWN_TIMEOUT_MS and a grace) and any generate or build in progress, then exits 0. Extra arguments go to `serve`
 * (`npm run dev -- --workers 2`); WORKERS defaults to 1, so a restart is quick.
 *
 * The server and each npm step run in a process group of their own, so that stopping reaches every process
 * they started (a cluster's workers, the compiler under npm) and nothing outlives this script.
 */
const { spawn } = require('node:child_process');
const { existsSync, watch } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');
const { buildChange, dictionaryChange, recordedDictionary, DEFAULT_DICTIONARY, regenerate, rebuild } = require('./freshness.js');

/** Quiet time after the last change before acting: an editor's save, a git checkout, are bursts of events. */
const DEBOUNCE_MS = 200;
const WATCHED = ['csdl', 'src', 'codegen'];
/** Beyond the server's own drain bound, how long a stop may take before the server's processes are killed. */
const STOP_GRACE_MS = 5_000;

const say = (line) => process.stderr.write(`dev: ${line}\n`);

/** Sends `signal` to every process of the group `pid` leads; a group already gone is fine. */
function signalGroup(pid, signal) {
  try { process.kill(-pid, signal); } catch (e) { if (e.code !== 'ESRCH') throw e; }
}

/** Resolves when `child` has exited (at once if it has). */
function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}

class DevLoop {
  constructor(root, serveArgs, env) {
    this.root = root;
    this.serveArgs = serveArgs;
    this.env = env;
    this.watchers = [];
    this.server = undefined;
    /** Settles once the last server told to stop has stopped. */
    this.serverGone = Promise.resolve();
    this.step = undefined;
    this.timer = undefined;
    this.busy = false;
    this.again = false;
    this.generatorChanged = false;
    this.stopping = false;
  }

  start() {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void this.stop());
    const folders = WATCHED.filter((f) => existsSync(join(this.root, f)));
    for (const folder of folders) this.watch(join(this.root, folder), true, (file) => this.changed(folder, file));
    this.watch(this.root, false, (file) => { if (file === 'tsconfig.json') this.changed('.', file); });
    // A dictionary generated/ was generated from outside csdl/ (generate --dictionary) is watched where it is.
    const recorded = recordedDictionary(this.root);
    const elsewhere = recorded && dirname(resolve(this.root, recorded.path));
    if (elsewhere && existsSync(elsewhere) && relative(join(this.root, 'csdl'), elsewhere) !== '') {
      this.watch(elsewhere, false, (file) => this.changed('dictionary', file));
    }
    say(`watching ${folders.map((f) => `${f}/`).join(', ')} and tsconfig.json (Ctrl-C stops)`);
    void this.cycle();
  }

  watch(path, recursive, onChange) {
    const watcher = watch(path, { recursive }, (_event, file) => onChange(file ? String(file) : ''));
    watcher.on('error', (e) => say(`cannot watch ${path} any longer (${e.message}); restart npm run dev`));
    this.watchers.push(watcher);
  }

  changed(folder, _file) {
    if (this.stopping) return;
    if (folder === 'codegen') this.generatorChanged = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.cycle(), DEBOUNCE_MS);
  }

  /** One refresh at a time; changes seen during one make another follow it. */
  async cycle() {
    if (this.busy) { this.again = true; return; }
    this.busy = true;
    try {
      do {
        this.again = false;
        await this.refresh();
      } while (this.again && !this.stopping);
    } finally {
      this.busy = false;
    }
  }

  async refresh() {
    const model = dictionaryChange(this.root);
    const generator = this.generatorChanged;
    this.generatorChanged = false;
    if (model || generator) {
      say(model ? `${model.reason}: regenerating` : 'the generator changed: regenerating');
      if (!(await this.run(regenerate(model ? model.dictionary : this.dictionary())))) {
        this.generatorChanged ||= generator;
        return this.failed('generate');
      }
    }
    const build = buildChange(this.root, { renewStamp: true });
    if (build) {
      say(`${build.reason}: building`);
      if (!(await this.run(rebuild()))) return this.failed('build');
    }
    if (this.stopping) return;
    if (build || !this.server) await this.restart();
    else say('the build is as it was: the server runs on');
  }

  /** The dictionary generated/ was generated from, else the default. */
  dictionary() {
    const recorded = recordedDictionary(this.root);
    const path = resolve(this.root, recorded ? recorded.path : DEFAULT_DICTIONARY);
    return existsSync(path) ? path : resolve(this.root, DEFAULT_DICTIONARY);
  }

  failed(what) {
    if (this.stopping) return;
    say(`${what} failed (its error is above): ${this.server ? `the last good server runs on (pid ${this.server.pid})` : 'no server is running'}; `
      + 'waiting for the next change');
  }

  /** Runs `npm <args>` in the project; resolves true when it succeeded. */
  async run(args) {
    if (this.stopping) return false;
    const child = spawn('npm', args, { cwd: this.root, stdio: ['ignore', 'inherit', 'inherit'], detached: true, shell: process.platform === 'win32' });
    this.step = child;
    const ok = await new Promise((done) => {
      child.once('error', (e) => { say(`npm ${args.join(' ')}: ${e.message}`); done(false); });
      child.once('exit', (code) => done(code === 0));
    });
    this.step = undefined;
    return ok && !this.stopping;
  }

  async restart() {
    if (this.server) say('restarting the server');
    await this.stopServer();
    if (this.stopping) return;
    const child = spawn(process.execPath, [join(this.root, 'dist/src/cli/main.js'), 'serve', ...this.serveArgs], {
      cwd: this.root, env: this.env, stdio: ['ignore', 'inherit', 'inherit'], detached: true,
    });
    this.server = child;
    say(`server started (pid ${child.pid})`);
    child.once('exit', (code, signal) => {
      if (this.server !== child) return;
      this.server = undefined;
      say(`the server stopped by itself (${code ?? signal}); waiting for the next change`);
    });
  }

  /** SIGTERM, so the server drains; its whole group is killed if it has not stopped within the drain bound and a grace. */
  stopServer() {
    const child = this.server;
    if (!child) return this.serverGone;
    this.server = undefined;
    const drainMs = Number(this.env.SHUTDOWN_TIMEOUT_MS) || 10_000;
    const timer = setTimeout(() => { say(`the server (pid ${child.pid}) did not stop in time: killing it`); signalGroup(child.pid, 'SIGKILL'); }, drainMs + STOP_GRACE_MS);
    child.kill('SIGTERM');
    this.serverGone = exited(child).then(() => {
      clearTimeout(timer);
      signalGroup(child.pid, 'SIGKILL');
    });
    return this.serverGone;
  }

  /** Once, however many signals come (under `npm run dev`, Ctrl-C reaches this script from the terminal and from npm). */
  async stop() {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    for (const watcher of this.watchers) watcher.close();
    const step = this.step;
    if (step) {
      signalGroup(step.pid, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(step.pid, 'SIGKILL'), STOP_GRACE_MS);
      await exited(step);
      clearTimeout(timer);
    }
    await this.stopServer();
    say('stopped');
    process.exit(0);
  }
}

if (require.main === module) {
  const env = { ...process.env, WORKERS: process.env.WORKERS ?? '1' };
  new DevLoop(resolve(__dirname, '..'), process.argv.slice(2), env).start();
}

module.exports = { DevLoop };
