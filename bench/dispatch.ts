/**
 * What request dispatch costs, apart from any work: the routes of every entity set (src/http/odata/data-routes.ts) and ten no-op steps
 * before them, each answering `{}`, dispatched three ways, each server in a process of its own under autocannon
 * (rounds interleaved, as bench/run.ts does):
 * - express-layers: every step an `app.use` layer and every route an `app.get` on the app's router (Express as
 *   documented; the routes' patterns given under /odata);
 * - express-router: the same, the data steps and routes on an `express.Router()` mounted at /odata;
 * - pipeline: src/http/pipeline.ts, the server's request listener on node:http running the steps in order and
 *   matching the routes below the service root, anything else handed to an Express app (the product's design).
 * Paths: a key fetch of the last set mounted (the routes tried before it: all others'), and a collection of the
 * first. `node dist/bench/dispatch.js [--duration S] [--rounds R]`; the figures are in docs/benchmarks.md.
 */
import { fork } from 'node:child_process';
import { createServer, RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express, { RequestHandler } from 'express';
import { serviceModel } from '../generated';
import { requestPipeline, Step } from '../src/http/pipeline';
import { DataRoutes, ResourceHandlers, RoutePath, setRoutes } from '../src/http/odata/data-routes';
import { RequestContexts, ServiceRoots } from '../src/http/request-context';
import { ExpressRoutes } from '../src/http/express-routes';
import { Licences } from '../src/auth/licence';

type Design = 'express-layers' | 'express-router' | 'pipeline';
const DESIGNS: readonly Design[] = ['express-layers', 'express-router', 'pipeline'];
const STEPS = 10;
const sets = serviceModel.entitySets;
const last = sets[sets.length - 1];
const PATHS = { key: `/odata/${last.name}('K1')`, collection: `/odata/${sets[0].name}` };

function handlers<H>(make: () => H): ResourceHandlers<H> {
  return { collection: make, count: make, byKey: make, navigation: make, member: make, rawValue: make, memberCount: make, digest: make };
}

function listener(design: Design): RequestListener {
  const app = express();
  app.set('query parser', false);
  const answer: RequestHandler = (_req, res) => res.end('{}');
  const step: RequestHandler = (_req, _res, next) => next();
  if (design === 'pipeline') {
    const routes = new DataRoutes();
    routes.sets(sets, handlers(() => (ctx) => { ctx.res.end('{}'); }), serviceModel.namespace);
    const noop: Step = (_ctx, next) => next();
    const contexts = new RequestContexts(new ServiceRoots(undefined), new Licences(serviceModel, undefined));
    const fail = (ctx: { res: { statusCode: number; end(): void } }) => { ctx.res.statusCode = 500; ctx.res.end(); };
    return requestPipeline({ contexts, requestId: () => 'id', every: Array(STEPS / 2).fill(noop), data: Array(STEPS / 2).fill(noop), routes, rest: new ExpressRoutes(app), fail });
  }
  for (let i = 0; i < STEPS / 2; i++) app.use(step);
  const under = (p: RoutePath): RoutePath => (typeof p === 'string' ? `/odata${p}` : new RegExp(`^\\/odata${p.source.slice(1)}`));
  if (design === 'express-layers') {
    for (let i = 0; i < STEPS / 2; i++) app.use('/odata', step);
    for (const { path } of sets.flatMap((s) => setRoutes(s))) app.get(Array.isArray(path) ? path.map(under) : under(path as RoutePath), answer);
    return app;
  }
  const odata = express.Router({ caseSensitive: true });
  for (let i = 0; i < STEPS / 2; i++) odata.use(step);
  for (const { path } of sets.flatMap((s) => setRoutes(s))) odata.get(path as string, answer);
  app.use('/odata', odata);
  return app;
}

function load(url: string, duration: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 16, duration }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function measure(port: number, path: string, duration: number): Promise<number> {
  await load(`http://127.0.0.1:${port}${path}`, 2);
  const r = await load(`http://127.0.0.1:${port}${path}`, duration);
  return r.requests.total / r.duration;
}

async function main(): Promise<void> {
  const arg = (name: string, d: number) => { const i = process.argv.indexOf(name); return i < 0 ? d : Number(process.argv[i + 1]); };
  const duration = arg('--duration', 5);
  const rounds = arg('--rounds', 3);
  const servers = await Promise.all(DESIGNS.map((design) => new Promise<{ design: Design; port: number; kill: () => void }>((resolve) => {
    const child = fork(__filename, ['--serve', design]);
    child.once('message', (port) => resolve({ design, port: port as number, kill: () => child.kill() }));
  })));
  const results = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      for (const [name, path] of Object.entries(PATHS)) {
        const key = `${name} ${s.design}`;
        results.set(key, [...results.get(key) ?? [], await measure(s.port, path, duration)]);
      }
    }
  }
  servers.forEach((s) => s.kill());
  console.log('| path | design | req/s (best of rounds) | vs pipeline |\n|---|---|---:|---:|');
  for (const name of Object.keys(PATHS)) {
    const best = (d: Design) => Math.max(...results.get(`${name} ${d}`)!);
    for (const d of DESIGNS) console.log(`| ${name} | ${d} | ${Math.round(best(d))} | ${(best(d) / best('pipeline')).toFixed(2)} |`);
  }
}

if (process.argv[2] === '--serve') {
  const server = createServer(listener(process.argv[3] as Design)).listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}
