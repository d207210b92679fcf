/**
 * The request pipeline: the server's request listener, on node:http's own request and response. It begins the
 * request's context (request-context.ts), runs the steps every request takes (the request log, HTTP conventions,
 * probes, the protocol version), and then, for a path under the service root, the data steps (read-only,
 * readiness, bearer, limits, format) and the data routes (odata/data-routes.ts: the entity sets' paths, matched below
 * the root). Anything else goes on to the rest of the app (Express's routes: the token endpoint, admin API,
 * console: express-routes.ts), entered the same way, with the request's context.
 *
 * Why the data path never enters Express: Express gives every request and response it handles its own prototypes,
 * and from then on node's HTTP code runs slower on them. The same key fetch (one better-sqlite3 read, one
 * `res.end`) costs 31 µs of CPU from a plain node:http listener and 90 µs from an Express app with one middleware,
 * and the product's key fetch went from 156–169 µs to 87–95 µs when the pipeline stopped being Express's middleware
 * (docs/benchmarks/notes/2026-11-27-issue-28-data-path.md). The steps also need the request's context, which Express's
 * layers pass on only through side channels. Here steps are plain calls in order, and the first error ends the
 * series (`fail` writes it).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { RequestContext, RequestContexts } from './request-context';

/** One step of the pipeline: calls `next` to go on, or `next(error)` to end the request with an error. */
export type Step = (ctx: RequestContext, next: (err?: unknown) => void) => void;

/** A Connect-style middleware on node's request and response (cors, compression). */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** A Connect-style middleware (cors, compression) as a step. */
export function middlewareStep(handler: Middleware): Step {
  return (ctx, next) => handler(ctx.req, ctx.res, next);
}

/** Runs steps in order; `done` gets the first error, or nothing once all have passed. */
export function runSteps(steps: readonly Step[], ctx: RequestContext, done: (err?: unknown) => void): void {
  let i = 0;
  const step = (err?: unknown): void => {
    if (err || i === steps.length) return done(err);
    // A step that throws passes its error on, as an Express layer would.
    try {
      steps[i++](ctx, step);
    } catch (e) {
      done(e);
    }
  };
  step();
}

/** What answers a request under the service root once its steps have passed (or rejects with why it cannot). */
export interface Routes {
  dispatch(ctx: RequestContext): Promise<void>;
}

export interface PipelineParts {
  readonly contexts: Pick<RequestContexts, 'begin'>;
  /** Steps every request takes, in order: the first begins the context's life (the request log). */
  readonly every: readonly Step[];
  /** Steps a request under the service root takes before its route. */
  readonly data: readonly Step[];
  readonly routes: Routes;
  /** A request id for the context (the request log's). */
  readonly requestId: (req: IncomingMessage) => string;
  /** Where a request outside the service root goes once the steps every request takes have passed. */
  readonly rest: Routes;
  /** Writes the error a step or a data route ended the request with. */
  readonly fail: (ctx: RequestContext, err: unknown) => void;
}

/** The pipeline as the server's request listener. */
export function requestPipeline(parts: PipelineParts): RequestListener {
  return (req, res) => {
    const ctx = parts.contexts.begin(req, res, parts.requestId(req));
    const fail = (err: unknown) => parts.fail(ctx, err);
    runSteps(parts.every, ctx, (err) => {
      if (err) return fail(err);
      if (ctx.path === undefined) return void parts.rest.dispatch(ctx).catch(fail);
      runSteps(parts.data, ctx, (e) => (e ? fail(e) : parts.routes.dispatch(ctx).catch(fail)));
    });
  };
}
