/**
 * The wire limit of a collection scenario: plain node:http answering every request with a fixed body (the
 * product's own response to the scenario, read from the files named by the arguments), no routing beyond the
 * body's number, no database, no JSON. What the product serves at that body's size is measured against this on
 * the same cores. With one file every path answers it; with several (a captured walk, static-walk.ts) `/` and
 * `/0` answer the first, `/<n>` the n-th, anything else 404. With STATIC_CONTENT_ENCODING (gzip), the bodies are
 * sent as that coding (bench/gzip-wire.ts: the product's gzip body against the same bytes sent from memory).
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { exitWithParent } from './orphan-guard';

exitWithParent();
const bodies = process.argv.slice(2).map((file) => readFileSync(file));
const coding = process.env.STATIC_CONTENT_ENCODING;
const headersOf = (body: Buffer) => ({
  'Content-Type': 'application/json;odata.metadata=minimal', 'Content-Length': String(body.length), ...(coding ? { 'Content-Encoding': coding } : {}),
});
const answers = bodies.map((body) => ({ body, headers: headersOf(body) }));

function answerTo(url: string): (typeof answers)[number] | undefined {
  if (answers.length === 1) return answers[0];
  return answers[url === '/' ? 0 : Number(url.slice(1))];
}

const server = createServer((req, res) => {
  const answer = answerTo(req.url ?? '/');
  if (!answer) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, answer.headers);
  res.end(answer.body);
});
const size = bodies.reduce((n, b) => n + b.length, 0);
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port} (${bodies.length === 1 ? 'a static body' : `${bodies.length} static bodies`} of ${size} bytes)`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
