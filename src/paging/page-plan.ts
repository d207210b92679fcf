/**
 * Where one page of a collection stands in its walk, decided before it is read: the position its `$skiptoken`
 * continues from (skiptoken.ts), checked against the client's scope epoch (scope-epoch.ts) and, for a change log,
 * against its marks (change-log-marks.ts); how many records it may hold (the page size the client prefers, `$top`
 * as a total across pages); and, once it is read, the nextLink that continues it. A handler asks for the plan,
 * reads the records it allows and writes them with what the plan answers.
 */
import type { IncomingMessage } from 'node:http';
import type { Client } from '../auth/clients';
import type { EntitySetSpec } from '../model/service-model';
import type { BoundQuery } from '../query/bound';
import type { QueryOptionsTree } from '../query/ast';
import { skipTokenOf } from '../query/request-plan';
import { Errors } from '../errors/catalogue';
import { ChangeLogMarks, markOf, refuseEventMarkBefore, refuseExpiredMark } from './change-log-marks';
import { nextLink, PageSize, pageSize } from './page-request';
import { refuseMarkBefore, refusePositionBefore, ScopeEpochs } from './scope-epoch';
import { PagePosition, queryDigest, SkipTokens } from './skiptoken';

export interface PagingOptions {
  /** Records per page of a collection response, unless the client prefers fewer (or more, up to maxPageSize). */
  readonly pageSize: number;
  /** Largest page a client may ask for with `Prefer: odata.maxpagesize`. */
  readonly maxPageSize: number;
}

/** What paging decisions are checked against. */
export interface PagingParts {
  /** Seals and opens $skiptoken values (there whenever a page is planned: requests wait for readiness). */
  readonly skipTokens: () => SkipTokens;
  /** When what each client may see last changed without its records changing. */
  readonly scopeEpochs: ScopeEpochs;
  readonly changeLogMarks?: ChangeLogMarks;
}

/** A page request, as far as paging reads it. */
export interface PageAsk {
  readonly set: EntitySetSpec;
  readonly query: Pick<BoundQuery, 'filter' | 'orderBy' | 'top' | 'skip'>;
  /** The options' texts as written, which a token is bound to. */
  readonly tree: Pick<QueryOptionsTree, 'texts'>;
  /** The query options as parsed from the query string (where `$skiptoken` is), and the string as encoded. */
  readonly options: Readonly<Record<string, string>>;
  readonly search: string;
  /** The path from the service root. */
  readonly path: string;
  /** Who asks: a token continues one client's walk, checked against that client's scope epoch. */
  readonly client?: Client;
  /** The request, for its `Prefer: odata.maxpagesize`. */
  readonly req: IncomingMessage;
}

/** How far a page's reading went: what the nextLink continues from. */
export interface PageProgress {
  /** Rows remain after the page. */
  readonly more: boolean;
  /** Records the page read. */
  readonly read: number;
  /** The sort values of the page's last record. */
  readonly last?: readonly unknown[];
}

/**
 * Records per page, and in all ($top). `$top` is a total across pages, and also asks for that many records at
 * once: up to MAX_PAGE_SIZE they come in one page (as MLS Grid and Trestle answer, and as clients that read one
 * response for `$top` expect: CAP's remote service asks `$top=250` and follows no nextLink), unless the client
 * asked for smaller pages with odata.maxpagesize. Beyond MAX_PAGE_SIZE, pages of MAX_PAGE_SIZE continue by
 * nextLink to `$top`. On a set whose dictionary declares Policy.PagedByTop, `$top` is the page size alone
 * and the walk goes on to the end.
 */
function pageLimits(set: EntitySetSpec, $top: number | undefined, size: PageSize, maxPageSize: number): { perPage: number; top: number } {
  if ($top === undefined) return { perPage: size.size, top: Number.MAX_SAFE_INTEGER };
  const perPage = Math.min($top, size.applied ? size.size : maxPageSize);
  return { perPage, top: set.pagedByTop ? Number.MAX_SAFE_INTEGER : $top };
}

export class PagePlanner {
  constructor(private readonly parts: PagingParts, private readonly options: PagingOptions) {}

  /** Where the page stands: its $skiptoken opened and checked against the client's scope epoch and the change log. */
  async plan(ask: PageAsk): Promise<PagePlan> {
    const { set, query: q } = ask;
    const { maxPageSize } = this.options;
    // Passing over records reads them: $skip may pass over no more than a page holds, so it costs no more than one.
    if (q.skip !== undefined && q.skip > maxPageSize) {
      throw Errors.OptionValueInvalid('$skip', `at most ${maxPageSize} (MAX_PAGE_SIZE); follow @odata.nextLink for later records`, String(q.skip));
    }
    // A token is bound to the client and the path too: it continues one client's walk of one query.
    const digest = queryDigest(`${ask.client?.id ?? ''} ${ask.path}`, { ...ask.tree.texts, skiptoken: undefined, format: undefined });
    const token = skipTokenOf(ask.options);
    const position = token !== undefined ? this.parts.skipTokens().decode(token, digest, q.orderBy) : undefined;
    const epoch = await this.parts.scopeEpochs.of(ask.client);
    refuseMarkBefore(epoch, set, q.filter);
    if (position) refusePositionBefore(epoch, set, position.epoch);
    const marks = this.parts.changeLogMarks;
    if (set.changeLog && marks) await refuseEventMarkBefore(epoch, set, markOf(set, q.filter, q.orderBy), marks);
    const size = pageSize(ask.req, this.options.pageSize, maxPageSize);
    return new PagePlan(this.parts, ask, { position, digest, epoch, size, ...pageLimits(set, q.top, size, maxPageSize) });
  }
}

interface Walk {
  readonly position?: PagePosition;
  readonly digest: string;
  readonly epoch?: string;
  readonly size: PageSize;
  readonly perPage: number;
  readonly top: number;
}

/** One page's place in its walk, and what continues it. */
export class PagePlan {
  /** Records the walk returned before this page. */
  private readonly returned: number;

  constructor(private readonly parts: PagingParts, private readonly ask: PageAsk, private readonly walk: Walk) {
    this.returned = walk.position?.returned ?? 0;
  }

  /** The sort values the page continues after (none on a walk's first page). */
  get after(): readonly unknown[] | undefined {
    return this.walk.position?.last;
  }

  /** Records the page may hold: a page's size, or what is left of `$top`. */
  get limit(): number {
    return Math.min(this.walk.perPage, this.walk.top - this.returned);
  }

  /** `Preference-Applied` for the page size, when the client asked for one. */
  get applied(): string | undefined {
    return this.walk.size.applied;
  }

  /**
   * This page's place in its walk, as text: with the request's plan (which holds the client's licence), it decides
   * the page's records and, with the service root, its nextLink (whose token's sealing differs, not what it holds).
   */
  get place(): string {
    const w = this.walk;
    const link = nextLink('', this.ask.path, this.ask.search, '');
    return JSON.stringify([link, w.position?.last ?? null, this.returned, w.epoch ?? null, w.perPage, w.top, w.size.applied ?? null]);
  }

  /** A mark into the change log that retention passed cannot continue exactly: checked once the page is being read. */
  async refuseExpiredMark(): Promise<void> {
    const { set, query: q } = this.ask;
    const marks = this.parts.changeLogMarks;
    if (!set.changeLog || !marks) return;
    await refuseExpiredMark(set, markOf(set, q.filter, q.orderBy, this.after), marks);
  }

  /** Another page follows when rows remain and $top (a total across pages) is not yet reached. */
  nextLink(serviceRoot: string, page: PageProgress): string | undefined {
    const returned = this.returned + page.read;
    if (!page.more || returned >= this.walk.top) return undefined;
    const token = this.parts.skipTokens().encode({ last: page.last!, returned, epoch: this.walk.epoch }, this.walk.digest);
    return nextLink(serviceRoot, this.ask.path, this.ask.search, token);
  }
}
