/**
 * How promptly the product answers a simple request while it is busy with heavy ones: the latencies the query
 * fuzz test used to bound (test/query-fuzz.test.ts now asserts only that such requests are answered, and how).
 *
 *   npm run build && node dist/bench/responsiveness.js [--seconds S] [--listings N] [--write]
 *
 * Starts `reso-server serve` (bench/product-server.ts) on a fresh SQLite file in .bench/ (or DATABASE_URL, which
 * it does not reseed), then measures, each with one simple request (`Property?$top=1&$select=ListingKey`) in
 * flight at a time, back to back:
 * - idle: the simple request alone;
 * - beside long filters: 16 connections sending and/or chains of 1,000 to 4,000 terms just under the 32,768-character
 *   $filter limit, and $filters of 10,000 terms (refused with 413);
 * and, alone, how long each long filter takes. `--write` puts the result in docs/benchmarks.md (its own section).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { latencyRow } from './latency-row';
import { startProduct } from './product-process';

const ROOT = resolve(__dirname, '../..');
const DOC = join(ROOT, 'docs/benchmarks.md');
const TOKEN = 'bench-responsiveness-token-2e6a0c4f8b1d5937';
const MAX_FILTER = 32 * 1024;
const CONNECTIONS = 16;
const SIMPLE = '/Property?$top=1&$select=ListingKey';
const BEGIN = '<!-- bench-family responsiveness -->';
const END = '<!-- /bench-family responsiveness -->';

interface Options { seconds: number; listings: number; write: boolean }

function parseArgs(argv: string[]): Options {
  const o: Options = { seconds: 10, listings: 2000, write: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--seconds') o.seconds = Number(argv[++i]);
    else if (argv[i] === '--listings') o.listings = Number(argv[++i]);
    else if (argv[i] === '--write') o.write = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!(o.seconds > 0) || !(o.listings >= 0)) throw new Error('--seconds and --listings take positive numbers');
  return o;
}

const filterUrl = (filter: string) => `/Property?$filter=${encodeURIComponent(filter)}`;

/** The heavy requests: and/or chains up to the length limit, and 10,000-term filters past it. */
function heavyRequests(): { label: string; url: string }[] {
  const fit = (sep: string, term: (i: number) => string) => {
    let n = 10_000;
    const chain = (k: number) => Array.from({ length: k }, (_, i) => term(i)).join(sep);
    while (chain(n).length > MAX_FILTER) n -= 10;
    return chain(n);
  };
  return [
    { label: 'ListingKey eq … or …, up to the limit', url: filterUrl(fit(' or ', (i) => `ListingKey eq 'L${String(i).padStart(6, '0')}'`)) },
    { label: 'true or true …, up to the limit', url: filterUrl(fit(' or ', () => 'true')) },
    { label: 'length(MlsStatus) ne i and …, up to the limit', url: filterUrl(fit(' and ', (i) => `length(MlsStatus) ne ${i}`)) },
    { label: 'not (…) and …, 1,000 terms', url: filterUrl(Array.from({ length: 1000 }, (_, i) => `not (ListingKey eq '${i}')`).join(' and ')) },
    { label: '10,000 or terms (413)', url: filterUrl(Array.from({ length: 10_000 }, (_, i) => `ListingKey eq 'L${String(i).padStart(6, '0')}'`).join(' or ')) },
  ];
}

async function timed(base: string, path: string): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  await res.arrayBuffer();
  return { ms: performance.now() - t0, status: res.status };
}

/** Simple requests back to back until `until()` says stop; their latencies. */
async function simpleLoop(base: string, until: () => boolean): Promise<number[]> {
  const out: number[] = [];
  while (!until()) {
    const r = await timed(base, SIMPLE);
    if (r.status !== 200) throw new Error(`the simple request answered ${r.status}`);
    out.push(r.ms);
  }
  return out;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `responsiveness-${o.listings}.sqlite`);
  const databaseUrl = process.env.DATABASE_URL ?? `sqlite:${file}`;
  const { base, child } = await startProduct(databaseUrl, o.listings, TOKEN);
  try {
    const heavy = heavyRequests();
    const idleEnd = performance.now() + o.seconds * 1000;
    const idle = await simpleLoop(base, () => performance.now() > idleEnd);
    let stop = false;
    let sentHeavy = 0;
    const worker = async () => {
      while (!stop) {
        const r = await timed(base, heavy[(sentHeavy++) % heavy.length].url);
        if (r.status >= 500) throw new Error(`a heavy request answered ${r.status}`);
      }
    };
    const busyEnd = performance.now() + o.seconds * 1000;
    const workers = Array.from({ length: CONNECTIONS }, worker);
    const busy = await simpleLoop(base, () => performance.now() > busyEnd);
    stop = true;
    await Promise.all(workers);
    const alone = [];
    for (const h of heavy) alone.push({ label: h.label, ms: (await timed(base, h.url)).ms });
    const table = [
      '| simple request | requests | p50 ms | p99 ms | max ms |',
      '| --- | ---: | ---: | ---: | ---: |',
      latencyRow('idle', idle),
      latencyRow(`beside ${CONNECTIONS} connections of long filters (${sentHeavy} sent)`, busy),
      '',
      '| long filter, alone | ms |',
      '| --- | ---: |',
      ...alone.map((a) => `| ${a.label} | ${a.ms.toFixed(1)} |`),
    ].join('\n');
    console.log(table);
    if (o.write) writeSection(o, databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'MariaDB/MySQL', table);
  } finally {
    child.kill('SIGTERM');
    if (!process.env.DATABASE_URL && process.env.BENCH_KEEP !== '1') rmSync(file, { force: true });
  }
}

function writeSection(o: Options, database: string, table: string): void {
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const section = `${BEGIN}
## Responsiveness beside heavy filters

A simple request (\`${SIMPLE}\`), one at a time and back to back, first with the server idle and then while
${CONNECTIONS} connections send the longest filters the service accepts (and/or chains just under the 32,768-character
limit) and 10,000-term filters that it refuses with 413; then each long filter alone. \`bench/responsiveness.ts\`
(\`node dist/bench/responsiveness.js --write\`), the measurements the query fuzz test once bounded in its assertions.

### ${database}, ${o.listings} listings: ${when} UTC
- Command: \`node dist/bench/responsiveness.js --seconds ${o.seconds} --listings ${o.listings}\`; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}

${table}
${END}`;
  let doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const i = doc.indexOf(BEGIN);
  const j = i < 0 ? -1 : doc.indexOf(END, i);
  if (i >= 0 && j > i) doc = doc.slice(0, i) + section + doc.slice(j + END.length);
  else {
    // Before the hand-written notes at the end, after the last measured family.
    const ends = [...doc.matchAll(/<!-- \/bench-family [\w-]+ -->/g)];
    const at = ends.length ? ends[ends.length - 1].index! + ends[ends.length - 1][0].length : doc.length;
    doc = `${doc.slice(0, at)}\n\n${section}${doc.slice(at)}`;
  }
  writeFileSync(DOC, doc);
  console.log(`wrote ${DOC}`);
}

main().catch((e: Error) => { console.error(`responsiveness: ${e.stack ?? e.message}`); process.exit(1); });
