/**
 * A random change of the shipped dictionary, drawn from a seed (the same seed, the same edits): 30–60% of each set's
 * removable fields removed (a set's change timestamp only now and then), now and then one field the policy still
 * names removed too (which generate must refuse), a few fields retyped between compatible and incompatible types,
 * a field renamed, a lookup value renamed, and local fields added, with and without a lookup of their own.
 * (Remove `rng` draws and every seed's case changes: add new kinds of edit after the existing draws.)
 */
import { SeededRandom } from '../../src/demo/random';
import type { EntitySetSpec, FieldSpec, ServiceModel } from '../../src/model/service-model';
import {
  DictionaryEdit, localField, neededFields, policyFields, queryability, removal, rename, renameLookupValue, retype,
} from './dictionary-edits';
import type { FieldShape } from './exact-conversion';

/**
 * The retypes a field of this shape may undergo, each named by what it is and whether the type takes every value
 * of the old one (the demo's values, as they are: a count of rooms fits an Int32), or only some of them.
 */
type Retype = [label: string, widens: boolean, shape: FieldShape];

function retypes(f: FieldSpec): Retype[] {
  const same = { collection: f.collection, lookupName: f.lookupName };
  const max = f.maxLength;
  // An indexed string must fit an index (generate refuses more than 510): widening stays within it there.
  const wider = max === undefined ? undefined : f.column ? Math.min(510, max * 2) : max * 2;
  if (f.collection) return [['collection → single value', false, { type: 'Edm.String', collection: false, maxLength: Math.min(max ?? 255, 255), lookupName: f.lookupName }]];
  switch (f.type) {
    case 'Edm.Int64':
      return [
        ['Int64 → Int32', true, { type: 'Edm.Int32', collection: false }],
        ['Int64 → Int16', false, { type: 'Edm.Int16', collection: false }],
        ['Int64 → Decimal(20,2)', true, { type: 'Edm.Decimal', collection: false, precision: 20, scale: 2 }],
        ['Int64 → Double', true, { type: 'Edm.Double', collection: false }],
        ['Int64 → String(20)', true, { type: 'Edm.String', collection: false, maxLength: 20 }],
        ['Int64 → Boolean', false, { type: 'Edm.Boolean', collection: false }],
      ];
    case 'Edm.Decimal': {
      const p = f.precision ?? 18;
      const s = f.scale ?? 0;
      return [
        ['a larger Precision', true, { type: 'Edm.Decimal', collection: false, precision: p + 2, scale: s }],
        ['a larger Scale', true, { type: 'Edm.Decimal', collection: false, precision: p + 1, scale: s + 1 }],
        ['a smaller Scale', false, { type: 'Edm.Decimal', collection: false, precision: p, scale: Math.max(0, s - 2) }],
        ['a smaller Precision', false, { type: 'Edm.Decimal', collection: false, precision: s + 2, scale: s }],
        ['Decimal → Int32', false, { type: 'Edm.Int32', collection: false }],
        ['Decimal → Double', true, { type: 'Edm.Double', collection: false }],
        ['Decimal → String(12)', true, { type: 'Edm.String', collection: false, maxLength: 12 }],
      ];
    }
    case 'Edm.String': {
      const out: Retype[] = [
        ['String → Collection(String)', true, { type: 'Edm.String', collection: true, maxLength: max, lookupName: f.lookupName }],
        ['String → Int32', false, { type: 'Edm.Int32', collection: false }],
      ];
      if (max !== undefined) {
        if (wider! > max) out.push(['a wider MaxLength', true, { type: 'Edm.String', ...same, maxLength: wider }]);
        out.push(['a narrower MaxLength', false, { type: 'Edm.String', ...same, maxLength: Math.max(1, Math.floor(max / 4)) }]);
      }
      if (!f.lookupName) {
        out.push(['String → Decimal(14,2)', false, { type: 'Edm.Decimal', collection: false, precision: 14, scale: 2 }]);
        out.push(['String → Boolean', false, { type: 'Edm.Boolean', collection: false }]);
        out.push(['String → Date', false, { type: 'Edm.Date', collection: false }]);
      }
      return out;
    }
    case 'Edm.Boolean':
      return [['Boolean → String(5)', true, { type: 'Edm.String', collection: false, maxLength: 5 }], ['Boolean → Int32', false, { type: 'Edm.Int32', collection: false }]];
    case 'Edm.Date':
      return [
        ['Date → DateTimeOffset', false, { type: 'Edm.DateTimeOffset', collection: false, precision: 3 }],
        ['Date → String(10)', true, { type: 'Edm.String', collection: false, maxLength: 10 }],
        ['Date → String(8)', false, { type: 'Edm.String', collection: false, maxLength: 8 }],
      ];
    case 'Edm.DateTimeOffset':
      return [['DateTimeOffset → Date', false, { type: 'Edm.Date', collection: false }], ['DateTimeOffset → String(30)', true, { type: 'Edm.String', collection: false, maxLength: 30 }]];
    default:
      return [];
  }
}

const LOCAL_SHAPES: readonly [string, FieldShape, boolean][] = [
  ['Rating', { type: 'Edm.String', collection: false, maxLength: 25, lookupName: 'Local' }, true],
  ['Features', { type: 'Edm.String', collection: true, maxLength: 255, lookupName: 'Local' }, true],
  ['Note', { type: 'Edm.String', collection: false, maxLength: 80 }, false],
  ['Count', { type: 'Edm.Int32', collection: false }, false],
  ['Amount', { type: 'Edm.Decimal', collection: false, precision: 12, scale: 2 }, false],
  ['Flag', { type: 'Edm.Boolean', collection: false }, false],
  ['Day', { type: 'Edm.Date', collection: false }, false],
  ['Status', { type: 'Edm.String', collection: false, maxLength: 50, lookupName: 'MlsStatus' }, false],
];

/** The edits of the random case `seed`. */
export function randomEdits(seed: number, model: ServiceModel): DictionaryEdit[] {
  const rng = new SeededRandom(seed);
  const edits: DictionaryEdit[] = [];
  const sets = model.entitySets.filter((s) => !s.changeLog);
  const named = policyFields(model);
  const removed = new Set<string>();
  const alone = (s: EntitySetSpec, f: FieldSpec) => neededFields(model, new Set([`${s.name}.${f.name}`])).size === 0;
  for (const s of sets) {
    const removable = s.fields.filter((f) => f.name !== s.key && alone(s, f) && (f.name !== s.changeTimestamp || rng.chance(0.15)));
    const gone = rng.sample(removable, Math.round(removable.length * rng.between(0.3, 0.6))).map((f) => f.name);
    if (!gone.length) continue;
    gone.forEach((f) => removed.add(`${s.name}.${f}`));
    edits.push(removal(s, gone, `${s.name}: remove ${gone.length} of its ${s.fields.length} fields (${gone.join(', ')})`));
  }
  if (rng.chance(0.2)) {
    const policy = model.entitySets.flatMap((s) => s.fields.filter((f) => !alone(s, f)).map((f) => [s, f.name] as const));
    const [s, f] = rng.pick(policy);
    edits.push(removal(s, [f], `${s.name}: remove ${f}, which the dictionary's policy names`));
    removed.add(`${s.name}.${f}`);
  }
  const free = (s: EntitySetSpec) => s.fields.filter((f) => !removed.has(`${s.name}.${f.name}`) && !named.has(`${s.name}.${f.name}`));
  const touched = new Set<string>();
  const pickField = (): [EntitySetSpec, FieldSpec] | undefined => {
    const s = rng.weighted(sets.map((x) => [x, x.name === 'Property' ? 4 : 1] as const));
    const f = rng.pick(free(s).filter((x) => !touched.has(`${s.name}.${x.name}`)));
    if (!f) return undefined;
    touched.add(`${s.name}.${f.name}`);
    return [s, f];
  };
  // Mostly widening, so that most cases serve; a narrowing is refused at start only if some record's value is cut.
  for (let i = rng.int(2, 5); i > 0; i--) {
    const picked = pickField();
    const widening = rng.chance(0.8);
    const kinds = picked ? retypes(picked[1]).filter(([, widens]) => widens === widening) : [];
    if (!picked || !kinds.length) continue;
    const [label, , shape] = rng.pick(kinds);
    edits.push(retype(picked[0], picked[1].name, shape, label));
  }
  if (rng.chance(0.7)) {
    const picked = pickField();
    if (picked) edits.push(rename(picked[0], picked[1].name, `${picked[1].name}Local`));
  }
  if (rng.chance(0.7)) {
    const used = new Set(sets.flatMap((s) => free(s).map((f) => f.lookupName)).filter((l): l is string => !!l));
    const lookup = rng.pick(model.lookups.filter((l) => used.has(l.name) && l.values.length > 1));
    const value = rng.pick(lookup.values).value;
    edits.push(renameLookupValue(model, lookup.name, value, `${value} (local)`));
  }
  for (let i = rng.int(1, 3); i > 0; i--) {
    const s = rng.weighted(sets.map((x) => [x, x.name === 'Property' ? 3 : 1] as const));
    const [word, shape, ownLookup] = rng.pick(LOCAL_SHAPES);
    const name = `Local${word}${i}`;
    if (s.fieldsByName[name] || edits.some((e) => e.fields.some((f) => f.set === s.name && f.field === name))) continue;
    const lookupName = ownLookup ? `Local${s.name}${word}${i}` : shape.lookupName;
    const values = ownLookup ? ['Good', 'Better', 'Best'].map((v) => `${v} ${word}`) : undefined;
    edits.push(localField(s, name, { ...shape, lookupName }, rng.chance(0.5), values));
  }
  // Drawn after the rest, so that the seeds drawn before these were added kept their edits.
  const among = (accept: (f: FieldSpec) => boolean): [EntitySetSpec, FieldSpec] | undefined => {
    const pairs = sets.flatMap((x) => free(x).filter((f) => accept(f) && !touched.has(`${x.name}.${f.name}`)).map((f) => [x, f] as [EntitySetSpec, FieldSpec]));
    const picked = pairs.length ? rng.pick(pairs) : undefined;
    if (picked) touched.add(`${picked[0].name}.${picked[1].name}`);
    return picked;
  };
  const indexed = rng.chance(0.5) ? among((f) => f.column !== undefined) : undefined;
  const widening = rng.chance(0.8);
  const kinds = indexed ? retypes(indexed[1]).filter(([, widens]) => widens === widening) : [];
  if (indexed && kinds.length) {
    const [label, , shape] = rng.pick(kinds);
    edits.push(retype(indexed[0], indexed[1].name, shape, `${label}, a field with a column`));
  }
  // An indexed string fits an index (MaxLength at most 510); a collection's elements go to its value table.
  const queried = rng.chance(0.4) ? among((f) => !f.filterable && (f.collection || f.type !== 'Edm.String' || (f.maxLength ?? 255) <= 510)) : undefined;
  if (queried) edits.push(queryability(queried[0], queried[1].name, true));
  const unqueried = rng.chance(0.3) ? among((f) => f.filterable && f.sortable) : undefined;
  if (unqueried) edits.push(queryability(unqueried[0], unqueried[1].name, false));
  return edits;
}
