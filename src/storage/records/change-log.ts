/**
 * The writing side of the change log (RESO EntityEvent, the dictionary's ChangeLogOf). Every record a write
 * transaction upserts, removes or restamps in a logged set gets one event, appended by that transaction just
 * before it commits, so an event exists exactly when its change does.
 *
 * - Order: event numbers come from one counter row locked to the transaction's end (Settings.nextNumbers),
 *   so they are handed out in commit order on every database and by every process: once a reader sees event
 *   N, no event below N can still appear. Within a transaction, events follow the dictionary's order of the
 *   logged sets (the listing root last: a listing's event follows those of its media, as RCP-027 advises).
 * - Prior images: with each event of a record that existed before, the state a licence judged it by just
 *   before the change: its listing's scope columns and its own named-field columns (ChangeLogSpec.priorImage).
 *   A client that could see the record then still sees its event after the record left its view (query/
 *   change-log-visibility.ts). They are read before the transaction's first change to that record or its
 *   listing, after the writers' lock is held, so they are what the previous commit left.
 */
import type { ChangeLogSpec, EntitySetSpec, LoggedSetSpec, ServiceModel } from '../../model/service-model';
import { listingRootOf } from '../../model/service-model';
import type { Database, Executor, Row } from '../db/database';
import { belongs, Belonging, whereBelongs } from './record-queries';
import type { RecordStore } from './record-store';
import type { Settings } from '../tables/settings';
import { batchesOf, InsertBatches, KEYS_PER_STATEMENT, paddedList, standIn, textTaking } from '../sql/shapes';

type Key = string | number;

/** The counter of event numbers, in the settings table. */
const SEQUENCE_COUNTER = 'entity-event-sequence';
const OWNER = standIn('owner');

interface PendingEvent {
  readonly key: Key;
  /** The prior image's values (without the sequence), or none for a record the transaction created. */
  readonly prior?: readonly unknown[];
}

export class ChangeLog {
  readonly spec: ChangeLogSpec;
  readonly logged: ReadonlyMap<string, LoggedSetSpec>;
  readonly root?: EntitySetSpec;
  private readonly priorColumns: readonly string[];
  /** Reads' texts by shape: set, columns and list length (a few per logged set, as lists are padded). */
  private readonly reads = new Map<string, string>();
  private eventInserts?: InsertBatches;
  private priorInserts?: InsertBatches;

  private constructor(
    readonly db: Database, readonly log: EntitySetSpec, private readonly model: ServiceModel,
    readonly store: (set: EntitySetSpec | string) => RecordStore, readonly settings: Settings,
  ) {
    this.spec = log.changeLog!;
    this.logged = new Map(this.spec.sets.map((s) => [s.name, s]));
    this.root = listingRootOf(model);
    const p = this.spec.priorImage;
    this.priorColumns = [...new Set([p.sequence, p.committed, p.existed, ...p.listingColumns, ...p.columns])];
  }

  /** The model's change log, if its dictionary declares one. */
  static of(db: Database, model: ServiceModel, store: (set: EntitySetSpec | string) => RecordStore, settings: Settings): ChangeLog | undefined {
    const log = model.entitySets.find((s) => s.changeLog);
    return log && new ChangeLog(db, log, model, store, settings);
  }

  /**
   * The events of one write transaction; `takeWritersLock` takes the writers' lock (the modification clock's row)
   * and answers the transaction's commit time.
   */
  begin(ex: Executor, takeWritersLock: () => Promise<string>): ChangeLogAppends {
    return new ChangeLogAppends(this, ex, takeWritersLock);
  }

  /**
   * Rows of `set` (key and the columns its prior image needs) whose `column` holds one of `values` (and that
   * belong to the parent's set, with `belonging`), read through `ex`.
   */
  async rows(ex: Executor, set: EntitySetSpec, spec: LoggedSetSpec, column: string, values: readonly Key[], belonging?: Belonging): Promise<Row[]> {
    const columns = [...new Set([set.key, ...listingColumnsOf(set, spec), ...spec.columns])];
    const owner = belonging && set.fieldsByName[belonging.field].column!;
    const out: Row[] = [];
    for (const keys of batchesOf(values, KEYS_PER_STATEMENT)) {
      const batch = paddedList(keys, KEYS_PER_STATEMENT);
      const text = this.read(['rows', set.name, column, owner ?? '', batch.length], () => {
        const list = batch.map((_, j) => standIn(`key ${j}`));
        const q = this.db.knex(set.table).select(columns).whereIn(column, list);
        return owner ? textTaking(whereBelongs(q, owner, OWNER), [...list, OWNER]) : textTaking(q, list);
      });
      out.push(...await ex.all(text, belonging ? [...batch, belonging.value] : batch));
    }
    return out;
  }

  /** The listings' scope columns by key, read through `ex`. */
  async listingImages(ex: Executor, keys: readonly Key[]): Promise<Map<string, Row>> {
    const out = new Map<string, Row>();
    const root = this.root!;
    for (const some of batchesOf(keys, KEYS_PER_STATEMENT)) {
      const batch = paddedList(some, KEYS_PER_STATEMENT);
      const text = this.read(['listings', batch.length], () => {
        const list = batch.map((_, j) => standIn(`key ${j}`));
        return textTaking(this.db.knex(root.table).select(this.spec.priorImage.listingColumns).whereIn(root.key, list), list);
      });
      for (const row of await ex.all(text, batch)) out.set(String(row[root.key]), row);
    }
    return out;
  }

  /** Appends events numbered from `first`, in the order given, committed at `committed`, with their prior images. */
  async append(ex: Executor, first: number, committed: string, events: readonly (PendingEvent & { readonly set: string })[]): Promise<void> {
    const s = this.spec;
    const store = this.store(this.log);
    // New numbers only: plain multi-row inserts, a few statements for a whole transaction's events.
    const rows = events.map((e, i) => store.encode({ [s.sequence]: first + i, [s.resourceName]: e.set, [s.recordKey]: String(e.key) }).row);
    this.eventInserts ??= new InsertBatches(this.db, store.table.name, store.table.columns.map((c) => c.name));
    await this.eventInserts.insert(ex, rows);
    const empty = this.priorColumns.slice(3).map(() => null);
    this.priorInserts ??= new InsertBatches(this.db, s.priorImage.table, this.priorColumns);
    await this.priorInserts.insert(ex, events.map((e, i) => [first + i, committed, e.prior ? 1 : 0, ...(e.prior ?? empty)]));
  }

  /** The text of a read, compiled at its shape's first use. */
  private read(shape: readonly (string | number)[], compile: () => string): string {
    const key = shape.join('\u0000');
    let text = this.reads.get(key);
    if (text === undefined) this.reads.set(key, (text = compile()));
    return text;
  }

  /** The prior image's values in table order (after sequence, commit time and flag), from a listing's image and the record's row. */
  priorValues(listing: Row | undefined, row: Row): unknown[] {
    return this.priorColumns.slice(3).map((c) => (this.spec.priorImage.listingColumns.includes(c) ? listing?.[c] ?? null : row[c] ?? null));
  }

  nextNumbers(ex: Executor, count: number): Promise<number> {
    return this.settings.nextNumbers(ex, SEQUENCE_COUNTER, count);
  }
}

/** The columns a record's listing is found by: the foreign key and the join's discriminator. */
function listingColumnsOf(set: EntitySetSpec, spec: LoggedSetSpec): string[] {
  if (!spec.listing) return [];
  const d = spec.listing.discriminator;
  return [set.fieldsByName[spec.listing.foreignKey].column!, ...(d ? [set.fieldsByName[d.field].column!] : [])];
}

/** The listing key a stored row belongs to, if any. */
function listingOf(set: EntitySetSpec, spec: LoggedSetSpec, row: Row): Key | undefined {
  if (!spec.listing) return undefined;
  const d = spec.listing.discriminator;
  if (d && !belongs(row[set.fieldsByName[d.field].column!], d.value)) return undefined;
  const key = row[set.fieldsByName[spec.listing.foreignKey].column!];
  return typeof key === 'string' || typeof key === 'number' ? key : undefined;
}

/** The events one write transaction gathers, one per record, appended by `flush` before it commits. */
export class ChangeLogAppends {
  /** By set name, by record key: the event each record changed so far will have. */
  private readonly pending = new Map<string, Map<string, PendingEvent>>();
  /** Listings' scope columns as the transaction found them before changing them (null: no such listing). */
  private readonly listings = new Map<string, Row | null>();
  /** The writers' lock, taken before the first prior image is read; it answers the commit time. */
  private commitTime?: Promise<string>;

  constructor(private readonly log: ChangeLog, private readonly ex: Executor, private readonly takeWritersLock: () => Promise<string>) {}

  /** Before records of `set` with these keys are written or (`removing`) removed: removing what is not there changes nothing. */
  async records(set: EntitySetSpec, keys: readonly Key[], removing = false): Promise<void> {
    const spec = this.log.logged.get(set.name);
    const pendingOfSet = this.pendingOf(set);
    const firstSeen = [...new Set(keys.map(String))].filter((k) => !pendingOfSet.has(k));
    if (!spec || firstSeen.length === 0) return;
    await (this.commitTime ??= this.takeWritersLock());
    const keyColumn = set.fieldsByName[set.key].column!;
    const rows = await this.log.rows(this.ex, set, spec, keyColumn, firstSeen);
    const byKey = new Map(rows.map((r) => [String(r[keyColumn]), r]));
    await this.addEvents(set, spec, firstSeen.filter((k) => !removing || byKey.has(k)).map((k) => [k, byKey.get(k)]));
  }

  /** Before the records of `set` whose `field` holds one of `values` (and that belong, with `belonging`) are changed. */
  async recordsByParent(set: EntitySetSpec, field: string, values: readonly Key[], belonging?: Belonging): Promise<void> {
    const spec = this.log.logged.get(set.name);
    if (!spec || values.length === 0) return;
    await (this.commitTime ??= this.takeWritersLock());
    const rows = await this.log.rows(this.ex, set, spec, set.fieldsByName[field].column!, values, belonging);
    const keyColumn = set.fieldsByName[set.key].column!;
    const pendingOfSet = this.pendingOf(set);
    await this.addEvents(set, spec, rows.map((r) => [String(r[keyColumn]), r] as const).filter(([k]) => !pendingOfSet.has(k)));
  }

  /** Appends the gathered events (the transaction is about to commit). */
  async flush(): Promise<void> {
    const events = this.log.spec.sets.flatMap((s) => [...(this.pending.get(s.name)?.values() ?? [])].map((e) => ({ ...e, set: s.name })));
    if (events.length === 0) return;
    const committed = await this.commitTime!;
    const first = await this.log.nextNumbers(this.ex, events.length);
    await this.log.append(this.ex, first, committed, events);
  }

  private pendingOf(set: EntitySetSpec): Map<string, PendingEvent> {
    return this.pending.get(set.name) ?? this.pending.set(set.name, new Map()).get(set.name)!;
  }

  /** An event for each record (`row`: as it was before, or none for one the transaction creates), with its prior image. */
  private async addEvents(set: EntitySetSpec, spec: LoggedSetSpec, entries: readonly (readonly [string, Row | undefined])[]): Promise<void> {
    const listingKeys = new Set<string>();
    for (const [, row] of entries) {
      const l = row && listingOf(set, spec, row);
      if (l !== undefined && !this.listings.has(String(l))) listingKeys.add(String(l));
    }
    if (listingKeys.size) {
      const images = await this.log.listingImages(this.ex, [...listingKeys]);
      for (const k of listingKeys) this.listings.set(k, images.get(k) ?? null);
    }
    const pendingOfSet = this.pendingOf(set);
    for (const [key, row] of entries) {
      const l = row && listingOf(set, spec, row);
      const listing = l === undefined ? undefined : this.listings.get(String(l)) ?? undefined;
      pendingOfSet.set(key, row ? { key, prior: this.log.priorValues(listing, row) } : { key });
    }
  }
}
