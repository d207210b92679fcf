/**
 * The wire limit of a collection scenario: plain node:http answering every request with one fixed body (the
 * product's own response to the scenario, read from the file named by the first argument), no routing, no
 * database, no JSON. What the product serves at that body's size is measured against this on the same cores.
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { exitWithParent } from './orphan-guard';

exitWithParent();
const body = readFileSync(process.argv[2]);
const headers = { 'Content-Type': 'application/json;odata.metadata=minimal', 'Content-Length': String(body.length) };
const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port} (a static body of ${body.length} bytes)`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
