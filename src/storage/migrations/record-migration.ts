/**
 * The records' side of a dictionary change. Each set's stored records remember the shape they were written in
 * (a settings row per set: its fields' types and facets, the lookups they draw from, its columns); when the
 * dictionary the server runs gives another shape, every record of the set is converted to it
 * (record-conversion.ts), first only to check (before any schema step, so a refused change leaves the
 * database untouched), then for good, in batches of one transaction each:
 * - the stored text, columns and value tables are rewritten without a change-log event where what the record
 *   serves is unchanged (a new null field, a refilled column);
 * - a record whose served content changed (a value converted, a dropped field that held a value) moves its
 *   ModificationTimestamp with its EntityEvent, and its listing's and related records' timestamps follow as
 *   an ingest's would (RecordTouch: ingest's touchRecords, handed in by the caller), so a consumer replicating by either replicates the change.
 * A batch converts records that have not been converted or that were converted already alike, so a pass cut
 * short is finished by the next start.
 */
import { sha256 } from '../../foundation/digest';
import type { EntitySetSpec, ServiceModel } from '../../model/service-model';
import { WHOLE_RECORD } from '../../query/projection';
import type { Database } from '../db/database';
import { RecordRefused, recordConverter } from './record-conversion';
import type { RecordStores } from '../records/record-stores';
import type { RecordTransaction, RecordWriter } from '../records/record-writer';
import type { Settings } from '../tables/settings';

/** Settings rows (one per set) holding the shape its stored records were last written in. */
export const RECORD_SHAPE = 'record-shape:';
/** Changed when the stored form changes in a way every record must be rewritten for. */
const STORED_FORM_VERSION = 3;
const BATCH = 500;
/** Refused records named per set; the count says how many more. */
const REFUSALS_NAMED = 10;

/**
 * Moves the ModificationTimestamp of the records of `set` with these keys, with their change-log events, and the
 * timestamps that follow them (their listing's, their related records'), as an ingest does: ingest's rule, above
 * storage, so the caller hands it in.
 */
export type RecordTouch = (tx: RecordTransaction, set: EntitySetSpec, keys: readonly (string | number)[]) => Promise<unknown>;

export interface MigrationParts {
  readonly model: ServiceModel;
  readonly db: Database;
  readonly stores: RecordStores;
  readonly writer: RecordWriter;
  readonly settings: Settings;
}

/** What converting a set's records does (or, checked, would do). */
export interface SetConversion {
  readonly set: string;
  readonly records: number;
  /** Records whose stored row changes (their text, or a column the change added or re-typed). */
  readonly rewritten: number;
  /** Records whose served content changes: their ModificationTimestamp moves, with an EntityEvent. */
  readonly restamped: number;
  /** The first refused records, with every reason. */
  readonly refused: readonly RecordRefused[];
  readonly refusedCount: number;
}

/** The shape a set's records are stored in, by part: a change of `content` converts them, of `layout` refills their rows. */
interface StoredShape {
  readonly content: string;
  readonly layout: string;
}

export function storedShapeOf(model: ServiceModel, set: EntitySetSpec): StoredShape {
  const lookups = new Set(set.fields.map((f) => f.lookupName).filter(Boolean));
  const content = set.fields.map((f) => [f.name, f.type, f.collection, f.nullable, f.maxLength, f.precision, f.scale, f.lookupName]);
  const values = model.lookups.filter((l) => lookups.has(l.name)).map((l) => [l.name, l.values.map((v) => v.value)]);
  const table = model.tables.find((t) => t.name === set.table);
  const layout = [table?.columns, set.fields.map((f) => [f.name, f.column, f.valueTable])];
  return { content: sha256(JSON.stringify([STORED_FORM_VERSION, content, values])), layout: sha256(JSON.stringify([STORED_FORM_VERSION, layout])) };
}

export class RecordMigration {
  constructor(private readonly parts: MigrationParts) {}

  /** The sets whose stored records are in another shape than the dictionary gives, parents first. */
  async due(stored: (name: string) => Promise<string | undefined> = (name) => this.parts.settings.get(name)): Promise<EntitySetSpec[]> {
    const { model } = this.parts;
    const due: EntitySetSpec[] = [];
    for (const set of model.entitySets) {
      if ((await stored(RECORD_SHAPE + set.name)) !== JSON.stringify(storedShapeOf(model, set))) due.push(set);
    }
    // A child's change moves its parent's timestamps, re-encoding the parent: parents are converted first.
    return [...due.filter((s) => s.relatedTimestamps?.length), ...due.filter((s) => !s.relatedTimestamps?.length)];
  }

  /** Converts every record of the sets without writing; `exists` says which tables are there yet. */
  async check(sets: readonly EntitySetSpec[], exists: (table: string) => Promise<boolean>): Promise<SetConversion[]> {
    const out: SetConversion[] = [];
    for (const set of sets) {
      const result = blank(set.name);
      if (await exists(set.table)) {
        const layoutChanged = await this.layoutChanged(set);
        await this.walk(set, async (batch) => { tally(result, batch, layoutChanged); });
      }
      out.push(result);
    }
    return out;
  }

  /**
   * Converts and writes every record of the sets (all of them convert: `check` said so), then remembers their
   * shape; `touch` moves the timestamps of the records whose served content changed.
   */
  async apply(sets: readonly EntitySetSpec[], touch: RecordTouch, log?: (line: string) => void): Promise<SetConversion[]> {
    const out: SetConversion[] = [];
    for (const set of sets) {
      const started = performance.now();
      const result = blank(set.name);
      const layoutChanged = await this.layoutChanged(set);
      await this.walk(set, (batch) => this.write(set, batch, layoutChanged, touch, result));
      // A record written meanwhile that cannot convert (by an instance still on the old dictionary): not done.
      if (result.refusedCount) throw new MigrationRefused([result]);
      await this.parts.db.transaction((tx) => this.parts.settings.set(tx, RECORD_SHAPE + set.name, JSON.stringify(storedShapeOf(this.parts.model, set))));
      if (result.rewritten) {
        log?.(`${set.name}: ${result.rewritten} of ${result.records} records rewritten for the dictionary's change, `
          + `${result.restamped} of them changed (change timestamp moved, one change-log event each) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      }
      out.push(result);
    }
    return out;
  }

  private async layoutChanged(set: EntitySetSpec): Promise<boolean> {
    const stored = await this.parts.settings.get(RECORD_SHAPE + set.name);
    return !stored || (JSON.parse(stored) as StoredShape).layout !== storedShapeOf(this.parts.model, set).layout;
  }

  private async write(set: EntitySetSpec, batch: readonly Converted[], layoutChanged: boolean, touch: RecordTouch, result: Mutable<SetConversion>): Promise<void> {
    tally(result, batch, layoutChanged);
    const changed = batch.filter((c) => c.conversion && c.conversion.changed);
    const rewrite = batch.filter((c) => c.conversion && (layoutChanged || c.textChanged));
    if (rewrite.length === 0) return;
    await this.parts.writer.transaction(async (tx) => {
      await tx.rewrite(set, rewrite.map((c) => c.conversion!.encoded));
      await touch(tx, set, changed.map((c) => c.conversion!.encoded.key));
    });
  }

  /** Every stored record of `set`, converted, in batches by key. */
  private async walk(set: EntitySetSpec, each: (batch: Converted[]) => Promise<void>): Promise<void> {
    const store = this.parts.stores.store(set);
    const convert = recordConverter(set, store.encode);
    const key = set.fieldsByName[set.key];
    const order = [{ field: key, column: key.column!, direction: 'asc' as const }];
    let last: unknown[] | undefined;
    for (;;) {
      const page = await store.query({ after: last, orderBy: order, limit: BATCH, projection: WHOLE_RECORD });
      if (page.records.length === 0) return;
      await each(page.records.map((text) => {
        try {
          const conversion = convert(JSON.parse(text) as Record<string, unknown>);
          return { conversion, textChanged: conversion.encoded.json !== text };
        } catch (e) {
          if (!(e instanceof RecordRefused)) throw e;
          return { refused: e, textChanged: false };
        }
      }));
      last = page.sortValues[page.sortValues.length - 1];
    }
  }
}

/** Records that cannot take the dictionary's change: nothing was changed (or, found late, the pass stops). */
export class MigrationRefused extends Error {
  constructor(readonly sets: readonly SetConversion[]) {
    super(`the dictionary's change cannot be applied to the stored records: ${sets.map(refusalText).join('; ')}. `
      + 'Correct those records (ingest them with values the new dictionary accepts, or delete them) under the dictionary '
      + 'they were written with, or change the dictionary; the database was left as it was');
  }
}

function refusalText(s: SetConversion): string {
  const more = s.refusedCount > s.refused.length ? `, and ${s.refusedCount - s.refused.length} more` : '';
  return `${s.set}: ${s.refusedCount} record(s) refused (${s.refused.map((r) => r.message).join(' | ')}${more})`;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

interface Converted {
  readonly conversion?: ReturnType<ReturnType<typeof recordConverter>>;
  readonly refused?: RecordRefused;
  readonly textChanged: boolean;
}

function blank(set: string): Mutable<SetConversion> {
  return { set, records: 0, rewritten: 0, restamped: 0, refused: [], refusedCount: 0 };
}

function tally(result: Mutable<SetConversion>, batch: readonly Converted[], layoutChanged: boolean): void {
  for (const c of batch) {
    result.records++;
    if (c.refused) {
      result.refusedCount++;
      if (result.refused.length < REFUSALS_NAMED) result.refused.push(c.refused);
      continue;
    }
    if (layoutChanged || c.textChanged) result.rewritten++;
    if (c.conversion!.changed) result.restamped++;
  }
}
