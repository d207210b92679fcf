/**
 * docs/development.md "Working on it": `npm run dev` (scripts/dev.js) serves, and on a change of the dictionary regenerates,
 * rebuilds and restarts the server; a dictionary the generator refuses leaves the last good server running,
 * saying so; SIGINT (Ctrl-C) stops the server and exits 0, leaving no process behind. One real run in a copy of
 * the project: every wait is bounded polling of the script's output or of the server.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { request } from './support/http';
import { until } from './support/poll';
import { copyProject, ProjectCopy, watchedProcess, WatchedProcess } from './support/project-copy';
import { alive } from './support/server-process';

const TOKEN = 'dev-watch-token-0123456789abcdefghijklmnop';
const PROBE = '<Property Name="DevWatchProbe" Type="Edm.String" MaxLength="10"/>';
const OFFICE_KEY = '<Property Name="OfficeKey" Type="Edm.String" MaxLength="255" Nullable="false"/>';

async function metadata(serviceRoot: string): Promise<string> {
  const r = await request(`${serviceRoot}/$metadata`, { token: TOKEN });
  expect(r.status).to.equal(200);
  return r.text;
}

describe('npm run dev: regenerate, rebuild and restart on every change', function () {
  this.timeout(600_000);
  let project: ProjectCopy;
  let dev: WatchedProcess | undefined;
  const servers: number[] = [];

  before(() => { project = copyProject(); });
  after(async () => {
    // Only if a step failed: end what this test started, by id.
    if (dev && dev.child.exitCode === null) dev.child.kill('SIGKILL');
    for (const pid of servers) { try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } }
    project.remove();
  });

  it('serves, restarts with the edited dictionary, keeps the last good server through a refused one, and stops on SIGINT', async () => {
    dev = watchedProcess(process.execPath, [join(project.root, 'scripts/dev.js')], {
      cwd: project.root,
      env: { ...process.env, PORT: '0', DATABASE_URL: `sqlite:${join(project.root, 'dev.sqlite')}`, SEED_LISTINGS: '0', DEMO_TOKEN: TOKEN, LOG_FORMAT: 'json', SHUTDOWN_TIMEOUT_MS: '1000' },
    });
    const first = await dev.waitFor(/dev: server started \(pid (\d+)\)[\s\S]*?serving (http:\/\/\S+\/odata)/, 60_000);
    servers.push(Number(first[1]));
    expect(await metadata(first[2])).not.to.include('DevWatchProbe');

    const dictionary = join(project.root, 'csdl/reso-dictionary.xml');
    const text = readFileSync(dictionary, 'utf8');
    expect(text).to.include(OFFICE_KEY);
    let mark = dev.output().length;
    writeFileSync(dictionary, text.replace(OFFICE_KEY, `${OFFICE_KEY}${PROBE}`));
    await dev.waitFor(/dev: csdl\/reso-dictionary\.xml changed after generated\/ was generated from it: regenerating/, 30_000, mark);
    const second = await dev.waitFor(/dev: server started \(pid (\d+)\)[\s\S]*?serving (http:\/\/\S+\/odata)/, 480_000, mark);
    servers.push(Number(second[1]));
    expect(second[1]).not.to.equal(first[1]);
    expect(alive(Number(first[1])), 'the first server stopped').to.equal(false);
    expect(await metadata(second[2])).to.include('<Property Name="DevWatchProbe" Type="Edm.String" MaxLength="10"');

    mark = dev.output().length;
    writeFileSync(dictionary, '<edmx:Edmx Version="4.0"/>\n');
    await dev.waitFor(new RegExp(`dev: generate failed \\(its error is above\\): the last good server runs on \\(pid ${second[1]}\\); waiting for the next change`), 120_000, mark);
    expect(dev.output().slice(mark)).to.include('generate failed: csdl/reso-dictionary.xml:1:1: not a CSDL dictionary: its namespace is not declared');
    expect(await metadata(second[2])).to.include('DevWatchProbe');

    dev.child.kill('SIGINT');
    expect(await dev.exited()).to.equal(0);
    expect(dev.output()).to.match(/dev: stopped\n$/);
    await until('the server is gone', () => !alive(Number(second[1])), 10_000);
  });
});
