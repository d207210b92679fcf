/**
 * The EntityEvent strategy (RCP-027), for an upstream whose $metadata declares the event set: the upstream's event
 * sequence is followed from the checkpoint (`<sequence> gt <checkpoint>`, in order, by nextLinks), the records a page
 * of events names are fetched by key in batches, and a record the upstream no longer serves (under the set's
 * filter) is a removal, of this upstream's records only. The checkpoint, the last sequence of the page, is written
 * with the page's last records. Without a checkpoint, or with one the upstream no longer keeps (its answer to
 * an expired or scope-changed mark is a 4xx), every set is walked by timestamp first, and the events followed
 * from the newest sequence read before that walk.
 */
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import { collectionUrl, PullContext, SetPull } from './pull-context';
import type { PagePosition } from './page-writer';
import { chunks, KEYS_PER_FETCH, linesByKey } from './records-by-key';
import type { TimestampWalk } from './timestamp-walk';
import { UpstreamFault } from './upstream';

export const EVENTS_STRATEGY = 'events';

/** The local dictionary's event set, whose names the upstream's is asked by (the same dictionary upstream). */
export function eventSetOf(model: ServiceModel): EntitySetSpec | undefined {
  return model.entitySets.find((s) => s.changeLog);
}

/** Whether the upstream's $metadata declares the event set. */
export async function offersEvents(context: PullContext, eventSet: EntitySetSpec): Promise<boolean> {
  const xml = await context.upstream.metadata();
  return new RegExp(`<EntitySet\\s+Name="${eventSet.name}"`).test(xml);
}

export class EventFollow {
  private readonly log;

  constructor(
    private readonly context: PullContext, private readonly eventSet: EntitySetSpec, private readonly pulls: readonly SetPull[],
    private readonly walk: TimestampWalk,
  ) {
    this.log = this.eventSet.changeLog!;
  }

  /** Follows the upstream's events to their end (walking every set first when there is no usable checkpoint); returns the records written. */
  async follow(): Promise<number> {
    const { settings, progress } = this.context;
    const checkpoint = await progress.checkpoint(settings.name, this.eventSet.name, EVENTS_STRATEGY);
    if (checkpoint === undefined) return this.bootstrap();
    try {
      return await this.from(checkpoint);
    } catch (e) {
      if (!(e instanceof UpstreamFault) || e.kind !== 'refused') throw e;
      this.context.log(`pull ${settings.name}: the upstream refused the event mark ${checkpoint} (${e.message}); walking every set again`);
      return this.bootstrap();
    }
  }

  private async bootstrap(): Promise<number> {
    const latest = await this.latestSequence();
    let written = 0;
    for (const pull of this.pulls) written += await this.walk.walk(pull);
    await this.context.writer.checkpointAlone(this.eventSet.name, { strategy: EVENTS_STRATEGY, position: latest });
    return written + (await this.from(latest));
  }

  private async latestSequence(): Promise<string> {
    const seq = this.log.sequence;
    const page = await this.context.upstream.page(collectionUrl(this.eventSet.name, { $select: seq, $orderby: `${seq} desc`, $top: '1' }));
    return String(page.records[0]?.[seq] ?? 0);
  }

  private async from(checkpoint: string): Promise<number> {
    const seq = this.log.sequence;
    let url: string | undefined = collectionUrl(this.eventSet.name, { $filter: `${seq} gt ${checkpoint}`, $orderby: `${seq} asc` });
    let written = 0;
    while (url) {
      await this.context.stillMine();
      const page = await this.context.upstream.page(url, { maxPageSize: this.context.settings.pageSize });
      const last = page.records.at(-1)?.[seq];
      const position = last === undefined ? undefined : { strategy: EVENTS_STRATEGY, position: String(last), set: this.eventSet.name };
      written += await this.apply(page.records, position);
      url = page.nextLink;
    }
    return written;
  }

  /** Fetches and writes the records a page of events names; the last write carries the checkpoint. */
  private async apply(events: readonly Readonly<Record<string, unknown>>[], position: PagePosition | undefined): Promise<number> {
    const named = new Map<SetPull, Set<string>>();
    for (const e of events) {
      const pull = this.pulls.find((p) => p.pulled.upstream === e[this.log.resourceName]);
      const key = e[this.log.recordKey];
      if (pull && (typeof key === 'string' || typeof key === 'number')) (named.get(pull) ?? named.set(pull, new Set()).get(pull)!).add(JSON.stringify(key));
    }
    const batches = [...named].flatMap(([pull, keys]) => chunks([...keys], KEYS_PER_FETCH).map((k) => [pull, k] as const));
    let written = 0;
    for (const [i, [pull, keys]] of batches.entries()) {
      const lines = await linesByKey(this.context, pull, keys);
      const report = await this.context.writer.write(pull.set, lines, i === batches.length - 1 ? position : undefined);
      const count = report.created + report.updated + report.deleted;
      written += count;
      await this.context.onWritten(pull.set.name, count);
    }
    if (batches.length === 0 && position) await this.context.writer.checkpointAlone(this.eventSet.name, position);
    return written;
  }
}
