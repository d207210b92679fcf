/**
 * What the token endpoint and the rate limit cost other requests: key-fetch latency for a client without a rate
 * limit and for one with a (never reached) limit, then for the unlimited client while another host sends wrong
 * secrets for one client id at a steady rate (each wrong secret a scrypt hash unless throttled).
 *
 *   npm run build && node dist/bench/token-endpoint.js [--seconds S] [--listings N] [--rate R] [--write]
 *
 * Starts `reso-server serve` (bench/product-server.ts) on a fresh SQLite file in .bench/ (or DATABASE_URL, which
 * it does not reseed); adds the clients with `reso-server clients add`; fetches by key back to back, one request
 * in flight, for S seconds per phase; the brute force sends R wrong secrets a second (default 28), starting a second
 * before the last phase and lasting through it.
 * `--write` puts the result in docs/benchmarks.md (its own section, replacing the previous run of either database).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { latencyRow } from './latency-row';
import { startProduct } from './product-process';
import { writeBenchSection } from './doc-section';

const ROOT = resolve(__dirname, '../..');
const TOKEN = 'bench-token-endpoint-token-6b0d4f8a2c7e1953';

interface Options { seconds: number; listings: number; rate: number; write: boolean }

function parseArgs(argv: string[]): Options {
  const o: Options = { seconds: 10, listings: 2000, rate: 28, write: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--seconds') o.seconds = Number(argv[++i]);
    else if (argv[i] === '--listings') o.listings = Number(argv[++i]);
    else if (argv[i] === '--rate') o.rate = Number(argv[++i]);
    else if (argv[i] === '--write') o.write = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!(o.seconds > 0) || !(o.listings >= 0) || !(o.rate > 0)) throw new Error('--seconds, --listings and --rate take positive numbers');
  return o;
}

/** `reso-server clients add …`; its client_id, client_secret and static token. */
function addClient(databaseUrl: string, args: string[]): { id: string; secret: string; token?: string } {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), 'clients', 'add', ...args], { env: { ...process.env, DATABASE_URL: databaseUrl } }).toString();
  return {
    id: /^client_id:\s+(\S+)/m.exec(out)![1],
    secret: /^client_secret:\s+(\S+)/m.exec(out)![1],
    token: /^static token:\s+(\S+)/m.exec(out)?.[1],
  };
}

async function keyFetches(url: string, token: string, seconds: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`a key fetch answered ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

/** Wrong secrets for `clientId` at `rate` a second until stopped; the statuses they got. */
function bruteForce(origin: string, clientId: string, rate: number): { stop: () => Promise<Map<number, number>> } {
  const statuses = new Map<number, number>();
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  const timer = setInterval(() => {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: `wrong-${n++}` });
    const p = fetch(`${origin}/oauth2/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body })
      .then(async (r) => { await r.arrayBuffer(); statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1); })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 1000 / rate);
  return { stop: async () => { clearInterval(timer); await Promise.all(inFlight); return statuses; } };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dir = join(ROOT, '.bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `token-endpoint-${o.listings}.sqlite`);
  if (!process.env.DATABASE_URL) for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) rmSync(f);
  const databaseUrl = process.env.DATABASE_URL ?? `sqlite:${file}`;
  const { base, child } = await startProduct(databaseUrl, o.listings, TOKEN);
  try {
    const target = addClient(databaseUrl, ['--name', 'Brute-force target']);
    const limited = addClient(databaseUrl, ['--name', 'Limited', '--rate', '1000000', '--static-token']);
    const first = await fetch(`${base}/Property?$top=1&$select=ListingKey`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const key = ((await first.json()) as { value: { ListingKey: string }[] }).value[0].ListingKey;
    const url = `${base}/Property('${encodeURIComponent(key)}')`;
    await keyFetches(url, TOKEN, 1); // warm-up
    const unlimited = await keyFetches(url, TOKEN, o.seconds);
    const limitedTimes = await keyFetches(url, limited.token!, o.seconds);
    const attack = bruteForce(new URL(base).origin, target.id, o.rate);
    await new Promise((r) => setTimeout(r, 1000)); // measured once the attack is under way
    const underAttack = await keyFetches(url, TOKEN, o.seconds);
    const statuses = await attack.stop();
    const answered = [...statuses].sort(([a], [b]) => a - b).map(([s, c]) => `${c}× ${s}`).join(', ');
    const table = [
      '| key fetch | requests | p50 ms | p99 ms | max ms |',
      '| --- | ---: | ---: | ---: | ---: |',
      latencyRow('client without a rate limit', unlimited),
      latencyRow('client with a rate limit (not reached)', limitedTimes),
      latencyRow(`client without a rate limit, beside ${o.rate} wrong secrets/s (${answered})`, underAttack),
    ].join('\n');
    console.log(table);
    const database = databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'MariaDB/MySQL';
    if (o.write) {
      writeBenchSection('token-endpoint', `${database}, ${o.listings} listings: {when}`,
        `node dist/bench/token-endpoint.js --seconds ${o.seconds} --listings ${o.listings} --rate ${o.rate}`, table);
    }
  } finally {
    child.kill('SIGTERM');
  }
}

main().then(() => process.exit(0), (e: Error) => { console.error(e); process.exit(1); });
