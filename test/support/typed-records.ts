/**
 * Records as the generated interfaces type them (generated/entities.ts): a test that builds a record the dictionary
 * no longer allows (a field renamed or removed, a lookup value gone, a type changed) fails to compile.
 */
import type { Entity, EntitySetName } from '../../generated/entities';

/** A record as a feed sends it to ingest: the change timestamp, which the service sets, may be left out. */
export type Ingested<S extends EntitySetName> = Omit<Entity<S>, 'ModificationTimestamp'> & { ModificationTimestamp?: string };

/** NDJSON text: one line per record (a string is a line as it is). */
export function ndjson(...lines: readonly unknown[]): string {
  return `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;
}

/** A deletion line of `S`: its key (as a record of `S` names it) and the mark. */
export type Deletion<S extends EntitySetName> = Partial<Entity<S>> & { readonly '@delete': true };

/** A line of an ingest of `S`: a record, or a deletion. */
export type IngestLine<S extends EntitySetName> = Ingested<S> | Deletion<S>;
