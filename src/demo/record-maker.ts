/**
 * Makes the demo records of one set: what the story gives, with what ties the record to the rest laid over it (its
 * listing's identifier and set name, for a set hanging off the listings; a key unique in the set; the change timestamp
 * where the set names it otherwise), then built field by field (record-builder.ts). Keeps a bounded sample of the
 * values of the fields other sets point at, so that their records can point at records that exist.
 */
import type { ChildLink } from './set-plan';
import { MODIFICATION_TIMESTAMP } from './standard-names';
import type { BuildOptions, DemoRecord, FieldContext, RecordBuilder } from './record-builder';
import { uniqueValue } from './unique-values';

/** Values of a field kept per set, for other sets' records to point at. */
const SAMPLE_SIZE = 1000;

export class RecordMaker {
  /** Records made so far: the next one's ordinal. */
  private made = 0;
  private readonly samples = new Map<string, unknown[]>();

  constructor(readonly builder: RecordBuilder, readonly link?: ChildLink) {}

  get set() {
    return this.builder.set;
  }

  get count(): number {
    return this.made;
  }

  /** Keeps values of `field` of the records made from now on (up to SAMPLE_SIZE of them). */
  watch(field: string): void {
    if (!this.samples.has(field)) this.samples.set(field, []);
  }

  /** Values of a watched field that records of this set hold. */
  sample(field: string): readonly unknown[] {
    return this.samples.get(field) ?? [];
  }

  /**
   * One record from the story's values (`given`, taken over and changed). `listing`: for a set hanging off the
   * listings, the values of the listing's fields it is joined on.
   */
  make(given: DemoRecord, ctx: FieldContext, listing?: Readonly<DemoRecord>, options?: BuildOptions): DemoRecord {
    const set = this.builder.set;
    const ordinal = this.made++;
    if (this.link && listing) {
      const parent = listing[this.link.referencedKey];
      if (parent !== undefined && parent !== null) given[this.link.foreignKey] = parent;
      if (this.link.discriminator) given[this.link.discriminator.field] = this.link.discriminator.value;
    }
    const changed = set.changeTimestamp;
    if (changed && given[changed] === undefined) given[changed] = given[MODIFICATION_TIMESTAMP];
    if (!this.builder.holdsExactly(set.key, given[set.key])) {
      const key = uniqueValue(this.builder, set.key, ordinal);
      if (key === undefined) throw new Error(`demo ${set.name}: its key ${set.key} cannot hold ${ordinal + 1} distinct values`);
      given[set.key] = key;
    }
    const record = this.builder.build(given, ctx, options);
    for (const [field, values] of this.samples) {
      const v = record[field];
      if (values.length < SAMPLE_SIZE && v !== undefined && v !== null && !Array.isArray(v)) values.push(v);
    }
    return record;
  }
}
