/**
 * Where a server's CPU time went: reads a V8 `.cpuprofile` (from `node --cpu-prof`) and prints the functions with
 * the most self time, and self time grouped by what the code is for (the groups below, by source file). A native
 * function (no file of its own: a string join, better-sqlite3's `all`, a socket write) counts in the group of
 * the nearest caller that has a file, so the SQL driver's time is SQL and a socket write is HTTP.
 *
 *   node dist/bench/cpu-profile-summary.js <file.cpuprofile> [--top N] [--skip-s S] [--requests R]
 *
 * --skip-s leaves out the samples of the profile's first S seconds (a server's start-up and warm-up load);
 * --requests divides the time by the requests served in the rest, giving microseconds per request, the figure
 * that compares two servers profiled under the same load for different lengths or rates.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

function option(argv: string[], name: string): number | undefined {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const n = Number(argv[i + 1]);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} takes a non-negative number`);
  return n;
}

/** First match wins: a file's group by its path. */
const GROUPS: readonly (readonly [string, RegExp])[] = [
  ['SQL (driver, statements, rows)', /better-sqlite3|mysql2|\/src\/storage\//],
  ['metering', /\/src\/metering\//],
  ['auth (token, licence, limits)', /\/src\/auth\/|\/src\/http\/(authentication|concurrency-limit|rate-limit)\.js/],
  ['observability (request log, metrics)', /pino|prom-client|sonic-boom|\/src\/observability\/|\/src\/http\/request-log\.js/],
  ['query and paging (parse, bind, skiptoken)', /\/src\/query\/|\/src\/paging\//],
  ['JSON and shape (body, format)', /\/src\/http\/(response|entity-shape|json-format|expansions|page-batches)\.js/],
  ['HTTP conventions (compression, caching, CORS)', /compression|compressible|negotiator|accepts|on-headers|vary|\/src\/http\/(caching|compression|cors)\.js/],
  ['Express', /node_modules\/(express|router|finalhandler|send|serve-static|parseurl|path-to-regexp|on-finished|depd|qs|type-is|mime|content-type|fresh|etag|proxy-addr|range-parser)\//],
  ['other product code', /\/src\//],
  ['baseline code', /\/bench\//],
  ['node: HTTP and sockets', /^node:(_http|http|net|stream|internal\/(http|streams|stream_base|net|child_process))/],
];

function groupOf(url: string): string {
  if (!url) return '';
  for (const [name, re] of GROUPS) if (re.test(url)) return name;
  return url.startsWith('node:') ? 'node: other' : 'other';
}

function main(argv: string[]): void {
  const file = argv[0];
  if (!file) throw new Error('usage: cpu-profile-summary <file.cpuprofile> [--top N]');
  const top = option(argv, '--top') ?? 25;
  const skipUs = (option(argv, '--skip-s') ?? 0) * 1e6;
  const requests = option(argv, '--requests');
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let at = 0;
  p.samples.forEach((id, i) => {
    at += p.timeDeltas[i] ?? 0;
    if (at >= skipUs) self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });

  const groupFor = (id: number): string => {
    const frame = byId.get(id)!.callFrame;
    if (frame.url) return groupOf(frame.url);
    if (frame.functionName.startsWith('(')) return frame.functionName; // (garbage collector), (program), (idle)
    const up = parent.get(id);
    return up === undefined ? 'other' : groupFor(up);
  };
  let total = 0;
  let idle = 0;
  const groups = new Map<string, number>();
  const functions = new Map<string, { us: number; group: string }>();
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') { idle += us; continue; }
    total += us;
    const g = groupFor(id);
    groups.set(g, (groups.get(g) ?? 0) + us);
    const name = `${frame.functionName || '(anonymous)'} ${frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist)\//, '')}:${frame.lineNumber + 1}` : '(native)'}`;
    const f = functions.get(name) ?? { us: 0, group: g };
    f.us += us;
    functions.set(name, f);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)}%`;
  const per = (us: number) => (requests ? ` | ${(us / requests).toFixed(0)}` : '');
  const perHead = requests ? ' | µs per request' : '';
  const perRule = requests ? '|---:' : '';
  console.log(`${file}: ${(total / 1e6).toFixed(2)} s of CPU sampled after ${skipUs / 1e6} s (idle ${(idle / 1e6).toFixed(2)} s not counted)`
    + `${requests ? `; ${requests} requests, ${(total / requests).toFixed(0)} µs of CPU each` : ''}\n`);
  console.log(`| group | self time | share${perHead} |\n|---|---:|---:${perRule}|`);
  for (const [g, us] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`| ${g} | ${(us / 1000).toFixed(0)} ms | ${pct(us)}${per(us)} |`);
  console.log(`\n| function (top ${top} by self time) | group | self time | share${perHead} |\n|---|---|---:|---:${perRule}|`);
  for (const [name, f] of [...functions].sort((a, b) => b[1].us - a[1].us).slice(0, top)) {
    console.log(`| \`${name}\` | ${f.group} | ${(f.us / 1000).toFixed(0)} ms | ${pct(f.us)}${per(f.us)} |`);
  }
}

main(process.argv.slice(2));
