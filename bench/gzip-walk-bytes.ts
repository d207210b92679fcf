/**
 * Issue 42: the bytes MariaDB hands over for one replication walk (every page of Property, pages of 1,000), counted
 * on a TCP proxy between the product and the database: identity (records read whole, as every walk was before the
 * stitched gzip answers) against gzip, the first walk (runs compressed and kept) and the second (its pages kept
 * whole: the walk reads the write mark alone; with GZIP_PAGE_CACHE_MB=0, keys and revisions only).
 *
 *   npm run build && npm run build:tests && MYSQL_URL=mysql://root@127.0.0.1:3306/test node dist/bench/gzip-walk-bytes.js [--listings N]
 */
import { createServer, connect, type Server } from 'node:net';
import { serviceModel } from '../generated';
import { seedDemoData } from '../src/demo/demo-data';
import { mariadbTarget } from '../test/support/databases';
import { request, startTestServer, TEST_TOKEN } from '../test/support/http';

/** A proxy to host:port that counts the bytes coming back from it. */
async function countingProxy(host: string, port: number): Promise<{ server: Server; port: number; received: () => number }> {
  let received = 0;
  const server = createServer((client) => {
    const upstream = connect(port, host);
    upstream.on('data', (d: Buffer) => { received += d.length; });
    client.pipe(upstream);
    upstream.pipe(client);
    for (const s of [client, upstream]) s.on('error', () => { client.destroy(); upstream.destroy(); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, received: () => received };
}

async function walk(base: string, coding: 'identity' | 'gzip'): Promise<number> {
  let link: string | undefined = `${base}/Property`;
  let pages = 0;
  while (link) {
    const r = await request(link, { wire: true, token: TEST_TOKEN, headers: { Prefer: 'odata.maxpagesize=1000', 'Accept-Encoding': coding } });
    link = r.json['@odata.nextLink'];
    pages++;
  }
  return pages;
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--listings');
  const listings = at > 0 ? Number(process.argv[at + 1]) : 2000;
  const db = await mariadbTarget.create();
  const u = new URL(db.url);
  const proxy = await countingProxy(u.hostname, Number(u.port || 3306));
  u.host = `127.0.0.1:${proxy.port}`;
  const server = await startTestServer(serviceModel, u.toString(), { maxPageSize: 1000 });
  try {
    await seedDemoData(server.service, { listings });
    const rows: string[] = [];
    for (const [name, coding] of [['identity (records read whole)', 'identity'], ['gzip, first walk (runs compressed and kept)', 'gzip'], ['gzip, second walk (pages kept whole)', 'gzip']] as const) {
      const before = proxy.received();
      const pages = await walk(server.url, coding);
      rows.push(`| ${name} | ${pages} | ${proxy.received() - before} |`);
    }
    console.log(`${listings} listings\n\n| walk | pages | bytes from MariaDB |\n|---|---:|---:|\n${rows.join('\n')}`);
  } finally {
    await server.close();
    proxy.server.close();
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
