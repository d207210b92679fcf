/**
 * Reconciling a replica of N keys holding 10 differences (missing, extra, stale; issue 41 point 3): requests,
 * body bytes and time by the digest (test/support/digest-client.ts, the reference client) against walking the
 * set's keys with nextLinks (`$select=<key>`, which finds missing and extra records only) and its keys with their
 * timestamps (`$select=<key>,<timestamp>`, which finds all three), the walks in pages of MAX_PAGE_SIZE.
 *
 * The records are Member records of the key and the timestamp alone, ingested through ingest's own batches
 * (ajv, the change log, service-kept timestamps) in the same process: a light set, so a million are written in
 * minutes where a million demo listings with their children take most of an hour. The server is the product's,
 * over HTTP on loopback, with its defaults but MAX_PAGE_SIZE (10,000, the most it allows).
 *
 *   node dist/bench/digest.js [--database sqlite:/tmp/reso-bench-digest.sqlite | mysql://root@127.0.0.1:3306/bench_digest]
 *                             [--keys 100000] [--parts 16] [--leaf 100] [--write]
 *
 * The database is kept between runs when it already holds `--keys` records (`--fresh` makes it again).
 */
import { cpus, loadavg } from 'node:os';
import { serviceModel } from '../generated';
import { emptyReport, ingestBatch } from '../src/ingest/ingest';
import { startServer } from '../src/process/server';
import { configFromEnv } from '../src/config/config';
import { compareKeys, DigestClient, Key } from '../test/support/digest-client';
import { writeBenchSection } from './doc-section';
import { freshDatabase } from './fresh-database';

const SET = 'Member';
const KEY = 'MemberKey';
const TIMESTAMP = 'ModificationTimestamp';
const TOKEN = 'bench-digest-token';
const PAGE = 10_000;
const INGEST_BATCH = 2000;
const DIFFERENCES = 10;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

interface Cost {
  requests: number;
  bytes: number;
  seconds: number;
}

/** A nextLink walk of `select`, in pages of PAGE: the records and what they cost. */
async function walk(root: string, select: string): Promise<{ records: Record<string, unknown>[]; cost: Cost }> {
  const started = performance.now();
  const records: Record<string, unknown>[] = [];
  const cost: Cost = { requests: 0, bytes: 0, seconds: 0 };
  for (let next: string | undefined = `${root}/${SET}?$select=${select}&$orderby=${KEY}`; next;) {
    const res = await fetch(next, { headers: { Authorization: `Bearer ${TOKEN}`, Prefer: `odata.maxpagesize=${PAGE}` } });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${next}: ${res.status} ${body.toString('utf8').slice(0, 200)}`);
    cost.requests++;
    cost.bytes += body.length;
    const page = JSON.parse(body.toString('utf8')) as { value: Record<string, unknown>[]; '@odata.nextLink'?: string };
    for (const r of page.value) records.push(r);
    next = page['@odata.nextLink'];
  }
  cost.seconds = (performance.now() - started) / 1000;
  return { records, cost };
}

async function ingestKeys(service: Parameters<typeof ingestBatch>[0], keys: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < keys; i += INGEST_BATCH) {
    const items = Array.from({ length: Math.min(INGEST_BATCH, keys - i) }, (_, j) => ({
      line: i + j + 1, input: { [KEY]: `M${String(i + j).padStart(8, '0')}`, [TIMESTAMP]: '2026-01-01T00:00:00Z' },
    }));
    const report = emptyReport();
    await ingestBatch(service, SET, items, report);
    if (report.errors.length) throw new Error(JSON.stringify(report.errors.slice(0, 2)));
    if ((i / INGEST_BATCH) % 50 === 0) process.stderr.write(`ingested ${i + items.length}\n`);
  }
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const url = option('--database', 'sqlite:/tmp/reso-bench-digest.sqlite');
  const keys = Number(option('--keys', '100000'));
  const parts = Number(option('--parts', '16'));
  const leaf = Number(option('--leaf', '100'));
  if (process.argv.includes('--fresh')) await freshDatabase(url);
  const config = { ...configFromEnv({ DATABASE_URL: url }), port: 0, seedListings: 0, demoToken: TOKEN, maxPageSize: PAGE };
  const server = await startServer(serviceModel, config);
  try {
    const stored = await server.service.store(SET).count();
    const ingestSeconds = stored === keys ? undefined : await ingestKeys(server.service, keys - stored);
    if (stored > keys) throw new Error(`${url} holds ${stored} ${SET} records, more than --keys ${keys}: run with --fresh`);
    const root = server.url;
    const keyWalk = await walk(root, KEY);
    const pairWalk = await walk(root, `${KEY},${TIMESTAMP}`);
    const replica = new Map(pairWalk.records.map((r) => [r[KEY] as Key, r[TIMESTAMP] as string]));
    const expected = changeReplica(replica);
    const client = new DigestClient({ root, set: SET, key: KEY, timestamp: TIMESTAMP, headers: { Authorization: `Bearer ${TOKEN}` }, parts, leaf });
    const started = performance.now();
    const found = await client.differences(replica);
    const digest: Cost = { requests: client.requests, bytes: client.bytes, seconds: (performance.now() - started) / 1000 };
    const same = (a: Key[], b: Key[]) => JSON.stringify([...a].sort(compareKeys)) === JSON.stringify([...b].sort(compareKeys));
    if (!same(found.missing, expected.missing) || !same(found.extra, expected.extra) || !same(found.stale, expected.stale)) {
      throw new Error(`the digest found ${JSON.stringify(found)}, expected ${JSON.stringify(expected)}`);
    }
    report(url, keys, parts, leaf, ingestSeconds, { keyWalk: keyWalk.cost, pairWalk: pairWalk.cost, digest });
  } finally {
    await server.close();
  }
}

/** DIFFERENCES changes, a third of each kind: records missing from the replica, extra in it, stale in it. */
function changeReplica(replica: Map<Key, string>): { missing: Key[]; extra: Key[]; stale: Key[] } {
  const all = [...replica.keys()];
  const out = { missing: [] as Key[], extra: [] as Key[], stale: [] as Key[] };
  for (let i = 0; i < DIFFERENCES; i++) {
    const k = all[Math.floor(((i + 0.5) / DIFFERENCES) * all.length)];
    if (i % 3 === 0) {
      replica.delete(k);
      out.missing.push(k);
    } else if (i % 3 === 1) {
      replica.set(`${String(k)}x`, '2020-01-01T00:00:00Z');
      out.extra.push(`${String(k)}x`);
    } else {
      replica.set(k, '1999-01-01T00:00:00Z');
      out.stale.push(k);
    }
  }
  return out;
}

function report(url: string, keys: number, parts: number, leaf: number, ingestSeconds: number | undefined, costs: Record<'keyWalk' | 'pairWalk' | 'digest', Cost>): void {
  const db = url.startsWith('sqlite:') ? 'SQLite' : 'MariaDB';
  const row = (name: string, c: Cost, finds: string) => `| ${name} | ${finds} | ${c.requests.toLocaleString('en-US')} | ${(c.bytes / 1e6).toFixed(2)} MB | ${c.seconds.toFixed(2)} s |`;
  const d = costs.digest;
  const ratio = (label: string, c: Cost) => `| digest / ${label} |  | ${(d.requests / c.requests).toFixed(4)} | ${(d.bytes / c.bytes).toFixed(5)} | ${(d.seconds / c.seconds).toFixed(3)} |`;
  const table = [
    '| method | finds | requests | body bytes | time |',
    '|---|---|---:|---:|---:|',
    row(`\`$select=${KEY}\` walk, pages of ${PAGE}`, costs.keyWalk, 'missing, extra'),
    row(`\`$select=${KEY},${TIMESTAMP}\` walk, pages of ${PAGE}`, costs.pairWalk, 'missing, extra, stale'),
    row(`digest, Parts=${parts}, leaf ${leaf}`, costs.digest, 'missing, extra, stale'),
    ratio('key walk', costs.keyWalk),
    ratio('key+timestamp walk', costs.pairWalk),
  ].join('\n');
  const note = `${keys.toLocaleString('en-US')} ${SET} keys, ${DIFFERENCES} differences`
    + `${ingestSeconds === undefined ? '' : `, ingested in ${ingestSeconds.toFixed(0)} s`}, ${cpus().length} × ${cpus()[0].model}, load average ${loadavg()[0].toFixed(1)}`;
  console.log(`${db}: ${note}\n${table}`);
  if (process.argv.includes('--write')) {
    writeBenchSection(`digest-${db.toLowerCase()}-${keys}`, `${db}, ${note}: {when}`,
      `node dist/bench/digest.js --database ${url} --keys ${keys} --parts ${parts} --leaf ${leaf} --write`, table);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
