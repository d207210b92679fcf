/**
 * The routes Express dispatches (the token endpoint, admin API, metrics, console), entered as the data routes are:
 * the pipeline hands them the request's context (pipeline.ts, `Routes`), and their steps and handlers are given it
 * as a data route's are (`step`). Express's routes reach it by their request, so it is kept by request here, for
 * them alone: a data request's context is passed by hand from step to route and never kept, since an entry of a
 * WeakMap outlives the young generation's collections, so every request kept in one (its context, request,
 * response and all they hold) was moved to the old generation and collected there (docs/benchmarks/notes/
 * 2026-11-27-issue-28-data-path.md).
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Routes, Step } from './pipeline';
import type { RequestContext } from './request-context';

export class ExpressRoutes implements Routes {
  private readonly byRequest = new WeakMap<IncomingMessage, RequestContext>();

  /** `app`: the Express app whose routes these are. */
  constructor(private readonly app: RequestListener) {}

  dispatch(ctx: RequestContext): Promise<void> {
    this.byRequest.set(ctx.req, ctx);
    this.app(ctx.req, ctx.res);
    return DISPATCHED;
  }

  /** A step (or the handler ending the steps) on one of Express's routes, given the request's context. */
  step(step: Step): RequestHandler {
    return (req, _res, next) => step(this.of(req), next);
  }

  /** Express's error handler: `fail` given the request's context and the error a route ended it with. */
  failure(fail: (ctx: RequestContext, err: unknown) => void): ErrorRequestHandler {
    return (err: unknown, req, _res, _next) => fail(this.of(req), err);
  }

  /** The context the pipeline handed over for `req` (every request of the app passes it first). */
  private of(req: IncomingMessage): RequestContext {
    const ctx = this.byRequest.get(req);
    if (!ctx) throw new Error('a request reached a route without passing the request pipeline');
    return ctx;
  }
}

/** Express answers (or fails) the request itself. */
const DISPATCHED = Promise.resolve();
