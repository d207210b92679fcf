/**
 * Ingest: upsert records of one resource by key, with the service (not the input) keeping the change
 * timestamps that replication relies on (spec §2, §3, §4 "Recommended practice"). What it keeps, and why,
 * is the dictionary's policy, read from the field tables:
 * - a set's change timestamp moves whenever a record's content changes; an identical re-ingest changes nothing;
 * - a change to a related record moves the parent's timestamps that the dictionary says it moves
 *   (MovedByRelated: any related change moves the listing's ModificationTimestamp, a photo its
 *   PhotosChangeTimestamp), for records that belong to the parent by the join and its discriminator;
 * - a set with DeletedWhen (listings) is never physically deleted: a delete marks the record. Others are removed.
 * Each batch is one transaction with one timestamp, allocated under the writers' lock (see Settings), so a
 * reader never sees a newer timestamp committed before an older one.
 */
import { EntitySetSpec, FieldCondition, ServiceModel, serviceKeptFields } from '../model/service-model';
import { batchConflictPolicy, ConflictPolicy, DEFAULT_BATCH_BUDGET_MS, isConflict } from '../storage/db/conflicts';
import type { RecordStores } from '../storage/records/record-stores';
import type { RecordTransaction, RecordWriter } from '../storage/records/record-writer';
import { EncodedRecord, RecordError } from '../storage/records/record-codec';
import { Follower, followersOf } from './followers';
import { DELETE_MARK, lineCheck, problemsText } from './line-check';
import { refusalOf } from './refusals';

export { DELETE_MARK } from './line-check';

export interface IngestItem {
  /** 1-based line number in the input, for reports. */
  readonly line: number;
  readonly input: Readonly<Record<string, unknown>>;
}

/** Something said about one line: its problems, or a notice. */
export interface LineReport {
  readonly line: number;
  readonly message: string;
  /** The line was not written because other writers won every attempt, not for its content: it may be tried again. */
  readonly conflict?: true;
}

export interface IngestReport {
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  /** Deletions of keys that are not stored: nothing to delete (each also a notice, with its line). */
  notFound: number;
  /** Parent records (listings) whose timestamps moved because their related records changed. */
  listingsTouched: number;
  /** Parts split in halves because their transaction lost conflicts for its whole time budget (conflicts.ts). */
  splits: number;
  /** Lines not written: every problem of each, with its JSON pointer, or the database's refusal. */
  errors: LineReport[];
  /** Lines written (or found nothing to do) that the operator should hear about. */
  notices: LineReport[];
}

/** What ingest uses: the model's sets and their stores, and write transactions with their ModificationTimestamp. */
export interface IngestTarget {
  readonly model: ServiceModel;
  readonly stores: RecordStores;
  readonly writer: RecordWriter;
}

/**
 * Work for the caller in each transaction that writes part of a batch, committed with it (a puller's checkpoint
 * and its record of what it wrote): `written` are the items of that transaction the batch did not refuse.
 */
export type AlsoInTransaction = (tx: RecordTransaction, written: readonly IngestItem[]) => Promise<void>;

export function emptyReport(): IngestReport {
  return { created: 0, updated: 0, unchanged: 0, deleted: 0, notFound: 0, listingsTouched: 0, splits: 0, errors: [], notices: [] };
}

/** Adds one batch's outcome to a report. */
function addTo(report: IngestReport, outcome: IngestReport): void {
  for (const k of ['created', 'updated', 'unchanged', 'deleted', 'notFound', 'listingsTouched', 'splits'] as const) report[k] += outcome[k];
  report.errors.push(...outcome.errors);
  report.notices.push(...outcome.notices);
}

export function entitySetOf(model: ServiceModel, name: string): EntitySetSpec {
  const set = model.entitySets.find((s) => s.name === name || s.pathAliases.includes(name));
  if (!set) throw new Error(`unknown resource ${name}; resources: ${model.entitySets.map((s) => s.name).join(', ')}`);
  return set;
}

type StoredRecord = Readonly<Record<string, unknown>>;

/** How a record of one set moves the timestamps of a parent it belongs to. */
interface ParentLink {
  readonly parent: EntitySetSpec;
  readonly foreignKey: string;
  readonly discriminator?: FieldCondition;
  readonly moves: readonly { readonly field: string; readonly when?: FieldCondition }[];
}

/** Every parent a record of `set` can move, from the parents' RelatedTimestamps policy. */
function parentLinksOf(model: ServiceModel, set: EntitySetSpec): ParentLink[] {
  return model.entitySets.flatMap((parent) => parent.navigations.flatMap((nav) => {
    const moves = (parent.relatedTimestamps ?? []).filter((r) => r.navigation === nav.name);
    if (nav.target !== set.name || !nav.join || moves.length === 0) return [];
    const d = nav.join.discriminator;
    return [{ parent, foreignKey: nav.join.foreignKey, discriminator: d?.on === 'target' ? d : undefined, moves }];
  }));
}

const meets = (record: StoredRecord, c: FieldCondition) => record[c.field] === c.value;

/** Parent keys and the timestamps to move on each, gathered over one batch. */
class ParentTouches {
  readonly byParent = new Map<ParentLink['parent'], Map<string | number, Set<string>>>();

  constructor(private readonly links: readonly ParentLink[]) {}

  add(record: StoredRecord | undefined): void {
    if (!record) return;
    for (const link of this.links) {
      const key = record[link.foreignKey];
      if (typeof key !== 'string' && typeof key !== 'number') continue;
      // A record naming another resource (a Member's media) does not belong to this parent.
      const d = link.discriminator;
      if (d && record[d.field] !== undefined && record[d.field] !== null && !meets(record, d)) continue;
      const keys = this.byParent.get(link.parent) ?? this.byParent.set(link.parent, new Map()).get(link.parent)!;
      const fields = keys.get(key) ?? keys.set(key, new Set()).get(key)!;
      for (const m of link.moves) if (!m.when || meets(record, m.when)) fields.add(m.field);
    }
  }
}

/**
 * Writes one batch in one transaction. Every line is checked against the set's record schema first; lines that
 * fail are reported with all their problems and skipped, and so are lines the codec refuses. The caller decides
 * whether a report with errors should have been written at all. When the database refuses the batch's data
 * (refusals.ts), the batch is written again in halves, down to single lines: the good lines are written, and the
 * line the database refuses is reported with its words. A transaction that loses conflicts with other writers (a
 * Galera node's, a deadlock) runs again for as long as the batch's time budget allows; a batch that keeps losing is
 * split the same way, each part with a budget of its own, and only a line that loses its own budget is reported.
 * `trial` runs the same and rolls every transaction back: only the errors are kept (--on-error reject's check).
 */
export async function ingestBatch(
  target: IngestTarget, setName: string, items: readonly IngestItem[], report: IngestReport, mode: 'write' | 'trial' = 'write',
  options: BatchOptions = {},
): Promise<void> {
  const set = entitySetOf(target.model, setName);
  const check = lineCheck(target.model, set);
  const valid: IngestItem[] = [];
  for (const item of items) {
    const { problems } = check(item.input);
    if (problems.length) report.errors.push({ line: item.line, message: problemsText(problems) });
    else valid.push(item);
  }
  await writeInHalves(target, set, valid, report, mode, batchConflictPolicy(options.conflictBudgetMs ?? DEFAULT_BATCH_BUDGET_MS), options.also);
  if (mode === 'write') report.errors.sort((a, b) => a.line - b.line);
}

export interface BatchOptions {
  /** How long a batch's transaction may keep losing conflicts before it is split; DEFAULT_BATCH_BUDGET_MS unless given. */
  readonly conflictBudgetMs?: number;
  /** Work committed with each transaction that writes part of the batch (AlsoInTransaction). */
  readonly also?: AlsoInTransaction;
}

/** Thrown out of a trial's transaction to roll it back. */
class TrialDone extends Error {}

async function writeInHalves(
  target: IngestTarget, set: EntitySetSpec, items: readonly IngestItem[], report: IngestReport, mode: 'write' | 'trial', policy: ConflictPolicy,
  also?: AlsoInTransaction,
): Promise<void> {
  if (items.length === 0) return;
  // Counted apart until the transaction commits: a batch the database refuses counts nothing, and a transaction run
  // again after a conflict (storage/conflicts.ts) counts from nothing again.
  let outcome = emptyReport();
  try {
    await target.writer.transaction(async (tx) => {
      outcome = emptyReport();
      const batch = new Batch(target, set, await tx.modificationTime(), outcome);
      await batch.load(tx, items);
      for (const item of items) batch.apply(item);
      await batch.write(tx);
      if (also) {
        const refused = new Set(outcome.errors.map((e) => e.line));
        await also(tx, items.filter((i) => !refused.has(i.line)));
      }
      if (mode === 'trial') throw new TrialDone();
    }, policy);
  } catch (e) {
    if (e instanceof TrialDone) { report.errors.push(...outcome.errors); return; }
    const refusal = refusalOf(e);
    const lost = refusal === undefined && isConflict(e);
    if (refusal === undefined && !lost) throw e;
    if (items.length === 1) {
      const message = lost ? `other writers' changes to the same records won every attempt for ${policy.budgetMs! / 1000} s (${(e as Error).message})`
        : `the database refused the record (${refusal})`;
      report.errors.push(lost ? { line: items[0].line, message, conflict: true } : { line: items[0].line, message });
      return;
    }
    if (lost) report.splits++;
    const half = Math.ceil(items.length / 2);
    await writeInHalves(target, set, items.slice(0, half), report, mode, policy, also);
    await writeInHalves(target, set, items.slice(half), report, mode, policy, also);
    return;
  }
  addTo(report, outcome);
}

/**
 * Moves the change timestamps of stored records whose served content changed without an ingest (a dictionary
 * migration converted or dropped their values), in the caller's transaction, exactly as an ingest that changed
 * them would: the record's ModificationTimestamp moves (with its EntityEvent), its listing's follow, and its
 * related records follow a listing (followers.ts). Returns how many records moved.
 */
export async function touchRecords(target: IngestTarget, tx: RecordTransaction, set: EntitySetSpec, keys: readonly (string | number)[]): Promise<number> {
  if (keys.length === 0) return 0;
  const batch = new Batch(target, set, await tx.modificationTime(), emptyReport());
  await batch.load(tx, keys.map((key, i) => ({ line: i + 1, input: { [set.key]: key } })));
  const moved = keys.filter((key) => batch.touch(key)).length;
  await batch.write(tx);
  return moved;
}

/** One batch of one set: the records it reads, the writes and removals it decides, the parents it touches. */
class Batch {
  private readonly store;
  private readonly kept: readonly string[];
  private current = new Map<string | number, StoredRecord>();
  private readonly writes = new Map<string | number, EncodedRecord>();
  private readonly removals = new Set<string | number>();
  private readonly touches: ParentTouches;
  private readonly followers: readonly Follower[];
  /** Keys of records this batch created, or changed in content (not only their timestamps). */
  private readonly changed = new Set<string | number>();
  private readonly created = new Set<string | number>();

  constructor(private readonly target: IngestTarget, private readonly set: EntitySetSpec, private readonly now: string, private readonly report: IngestReport) {
    this.store = target.stores.store(set);
    this.kept = serviceKeptFields(set);
    this.touches = new ParentTouches(parentLinksOf(target.model, set));
    this.followers = followersOf(target.model, set);
  }

  async load(tx: RecordTransaction, items: readonly IngestItem[]): Promise<void> {
    const keys = [...new Set(items.map((i) => i.input[this.set.key]).filter((k): k is string | number => typeof k === 'string' || typeof k === 'number'))];
    this.current = await tx.recordsByKeys(this.set, keys);
  }

  /** Applies one line that passed its check; the codec may still refuse it (a date not on the calendar). */
  apply({ line, input }: IngestItem): void {
    try {
      const key = input[this.set.key] as string | number;
      if (input[DELETE_MARK] === true) this.remove(line, key);
      else this.upsert(key, input);
    } catch (e) {
      if (!(e instanceof RecordError)) throw e;
      this.report.errors.push({ line, message: e.field ? `/${e.field} ${e.detail}` : e.detail });
    }
  }

  private remove(line: number, key: string | number): void {
    const before = this.current.get(key);
    const mark = this.set.deletedWhen;
    if (!before) {
      this.report.notFound++;
      this.report.notices.push({ line, message: `no ${this.set.name} with key ${JSON.stringify(key)}: nothing to delete` });
      return;
    }
    if (mark && meets(before, mark)) { this.report.unchanged++; return; }
    if (mark) {
      this.keep(key, this.store.encode({ ...before, [mark.field]: mark.value, ...this.stamp() }));
    } else {
      this.removals.add(key);
      this.writes.delete(key);
      this.current.delete(key);
    }
    this.touches.add(before);
    if (mark) this.changed.add(key);
    this.report.deleted++;
  }

  /** A stored record whose content changed in place: stamped now, as a changed record is. Returns whether it is stored. */
  touch(key: string | number): boolean {
    const before = this.current.get(key);
    if (!before) return false;
    this.keep(key, this.store.encode({ ...before, ...this.stamp() }));
    this.changed.add(key);
    this.touches.add(before);
    return true;
  }

  private upsert(key: string | number, input: Readonly<Record<string, unknown>>): void {
    const before = this.current.get(key);
    // The service's timestamps are kept as stored (or stamped now for a new record), whatever the input says. The
    // encoder leaves annotations (DELETE_MARK among them) out of the record.
    const kept = Object.fromEntries(this.kept.map((f) => [f, before ? before[f] : undefined]));
    const candidate = this.store.encode(input, before ? kept : { ...kept, ...this.stamp() });
    if (before && candidate.json === this.store.encode(before).json) { this.report.unchanged++; return; }
    const encoded = before ? this.store.encode(input, { ...kept, ...this.stamp() }) : candidate;
    this.removals.delete(key);
    this.keep(key, encoded);
    this.changed.add(key);
    if (before) this.report.updated++; else { this.report.created++; this.created.add(key); }
    this.touches.add(before);
    this.touches.add(encoded.value as StoredRecord);
  }

  private stamp(): Record<string, string> {
    return this.set.changeTimestamp ? { [this.set.changeTimestamp]: this.now } : {};
  }

  private keep(key: string | number, encoded: EncodedRecord): void {
    this.writes.set(key, encoded);
    this.current.set(key, encoded.value as StoredRecord);
  }

  async write(tx: RecordTransaction): Promise<void> {
    for (const follower of this.followers) await this.moveFollowers(tx, follower);
    await tx.upsert(this.set, [...this.writes.values()]);
    await tx.deleteByKeys(this.set, [...this.removals]);
    for (const [parent, keys] of this.touches.byParent) this.report.listingsTouched += await touchParents(this.target, tx, parent, keys, this.now);
  }

  /**
   * Moves the related records of changed records to this batch's timestamp (followers.ts), and gives a
   * record created after its related records the parent timestamps those move (a photo's PhotosChangeTimestamp).
   */
  private async moveFollowers(tx: RecordTransaction, follower: Follower): Promise<void> {
    const byReference = new Map<string | number, string | number>();
    for (const key of this.changed) {
      const reference = this.current.get(key)?.[follower.referencedKey];
      if (typeof reference === 'string' || typeof reference === 'number') byReference.set(reference, key);
    }
    if (byReference.size === 0) return;
    await tx.restampByParent(follower.set, follower.foreignKey, [...byReference.keys()], follower.discriminator, this.now);
    // Only a record created here can have related records whose own arrival did not move its timestamps.
    const created = [...byReference].filter(([, key]) => this.created.has(key)).map(([reference]) => reference);
    if (created.length === 0 || follower.moves.length === 0) return;
    for (const r of await tx.recordsByParent(follower.set, follower.foreignKey, created, follower.discriminator)) {
      const key = byReference.get(r[follower.foreignKey] as string | number)!;
      const moved = follower.moves.filter((m) => !m.when || meets(r, m.when));
      if (moved.length) this.keep(key, this.store.encode({ ...this.current.get(key), ...Object.fromEntries(moved.map((m) => [m.field, this.now])) }));
    }
  }
}

/** Moves the timestamps of parents whose related records changed (and their own change timestamp with them). */
async function touchParents(
  target: IngestTarget, tx: RecordTransaction, parent: EntitySetSpec, touched: ReadonlyMap<string | number, ReadonlySet<string>>, now: string,
): Promise<number> {
  const store = target.stores.store(parent);
  const stored = await tx.recordsByKeys(parent, [...touched.keys()]);
  const writes: EncodedRecord[] = [];
  for (const [key, fields] of touched) {
    const record = stored.get(key);
    if (!record) continue; // related records may arrive before their parent
    const moved = Object.fromEntries([...fields, ...(parent.changeTimestamp ? [parent.changeTimestamp] : [])].map((f) => [f, now]));
    writes.push(store.encode(record, moved));
  }
  await tx.upsert(parent, writes);
  return writes.length;
}
