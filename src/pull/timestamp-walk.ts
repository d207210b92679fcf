/**
 * The timestamp + key strategy: every record whose change timestamp upstream is at or after the checkpoint (less
 * the overlap), ordered by timestamp and key where the upstream allows, following nextLinks (keyset or $skip: the
 * client just follows them). Each page is written with the checkpoint moved to the newest timestamp it holds, so a
 * resumed walk starts at that timestamp, not past it: records sharing it that a page boundary cut off are read
 * again, and records read twice are found unchanged by ingest. A nextLink that expires restarts from the
 * checkpoint. A set without a change timestamp is walked whole every pass.
 *
 * The next page is asked for while the current one is written (one page ahead, no more): the upstream's time and
 * the local write overlap. The checkpoint still moves only with the page written, so a page fetched ahead and never
 * written (the process killed, the write failed) is simply asked for again.
 */
import { UpstreamFault, UpstreamPage } from './upstream';
import { allOf, collectionUrl, PullContext, SetPull } from './pull-context';
import { linesOf } from './page-lines';

export const TIMESTAMP_STRATEGY = 'timestamp';

/** How the walk is ordered: what the upstream refused is asked no more (per process). */
type Order = 'timestamp-key' | 'timestamp' | 'none';
const ORDERS: readonly Order[] = ['timestamp-key', 'timestamp', 'none'];

/** Restarts from the checkpoint after expired nextLinks, at most this often per pass. */
const RESTARTS = 5;

export class TimestampWalk {
  private readonly orders = new Map<string, Order>();

  constructor(private readonly context: PullContext) {}

  /** Walks `pull`'s set to the upstream's end; returns the records written. */
  async walk(pull: SetPull): Promise<number> {
    for (let restarts = 0; ; restarts++) {
      try {
        return await this.walkOnce(pull);
      } catch (e) {
        if (!(e instanceof UpstreamFault) || e.kind !== 'link-expired' || restarts >= RESTARTS) throw e;
        this.context.log(`pull ${this.context.settings.name}: ${pull.pulled.upstream}: a nextLink expired (${e.message}); restarting from the checkpoint`);
      }
    }
  }

  private async walkOnce(pull: SetPull): Promise<number> {
    const { settings, progress } = this.context;
    const timestamp = pull.set.changeTimestamp;
    const checkpoint = timestamp ? await progress.checkpoint(settings.name, pull.set.name, TIMESTAMP_STRATEGY) : undefined;
    let order = this.orders.get(pull.pulled.upstream) ?? ORDERS[0];
    let url = this.firstUrl(pull, checkpoint, order);
    let newest = checkpoint;
    let written = 0;
    let first = true;
    let ahead: Promise<UpstreamPage> | undefined;
    for (;;) {
      let page;
      try {
        page = await (ahead ?? this.fetch(url));
      } catch (e) {
        // An upstream that refuses the order is asked again without it, once: the walk is exact either way.
        if (!(first && e instanceof UpstreamFault && e.kind === 'refused' && order !== 'none' && timestamp)) throw e;
        order = ORDERS[ORDERS.indexOf(order) + 1];
        this.orders.set(pull.pulled.upstream, order);
        this.context.log(`pull ${settings.name}: ${pull.pulled.upstream} refused the order (${e.message}); ordering by ${order} from now on`);
        url = this.firstUrl(pull, checkpoint, order);
        continue;
      }
      first = false;
      ahead = page.nextLink === undefined ? undefined : this.fetchAhead(page.nextLink);
      const lines = linesOf(this.context, pull, page.records);
      newest = newestOf(newest, lines.map((l) => l.upstreamTimestamp));
      // Unordered, no page says how far the walk has come: only its end does.
      const moves = timestamp && newest !== undefined && (order !== 'none' || !page.nextLink);
      const report = await this.context.writer.write(pull.set, lines, moves ? { strategy: TIMESTAMP_STRATEGY, position: newest! } : undefined);
      const count = report.created + report.updated + report.deleted;
      written += count;
      await this.context.onWritten(pull.set.name, count);
      for (const e of report.errors) this.context.log(`pull ${settings.name}: ${pull.pulled.upstream}: record refused: ${e.message}`);
      if (!page.nextLink) return written;
      url = page.nextLink;
    }
  }

  private async fetch(url: string): Promise<UpstreamPage> {
    await this.context.stillMine();
    return this.context.upstream.page(url, { maxPageSize: this.context.settings.pageSize });
  }

  /** The page at `url`, asked for now; a failure is met when the walk comes to it (and not at all if it stops first). */
  private fetchAhead(url: string): Promise<UpstreamPage> {
    const page = this.fetch(url);
    page.catch(() => undefined);
    return page;
  }

  private firstUrl(pull: SetPull, checkpoint: string | undefined, order: Order): string {
    const timestamp = pull.set.changeTimestamp;
    const since = timestamp && checkpoint !== undefined
      ? `${timestamp} ge ${new Date(Date.parse(checkpoint) - this.context.settings.overlapSeconds * 1000).toISOString()}` : undefined;
    const orderBy = !timestamp || order === 'none' ? undefined
      : order === 'timestamp' ? `${timestamp} asc` : `${timestamp} asc,${pull.set.key} asc`;
    return collectionUrl(pull.pulled.upstream, { $filter: allOf(pull.pulled.filter, since), $orderby: orderBy });
  }
}

/** The newest of the timestamps (compared as instants, whatever their precision), as the upstream wrote it. */
function newestOf(current: string | undefined, stamps: readonly (string | null | undefined)[]): string | undefined {
  let newest = current;
  for (const s of stamps) if (s && !Number.isNaN(Date.parse(s)) && (newest === undefined || Date.parse(s) > Date.parse(newest))) newest = s;
  return newest;
}
