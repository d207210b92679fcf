/**
 * The stored record's in-place edits (storage/record-codec.ts) against what they stand for: each edit of the
 * stored text gives exactly what parsing the record, changing it and writing it again gives, on texts made to
 * look like what the edit looks for from inside string values.
 */
import { expect } from 'chai';
import { serviceModel } from '../generated';
import { numbersAsStrings, recordEncoder, timestampEdit, withoutNulls } from '../src/storage/records/record-codec';

/** Strings that hold the edits' patterns, escaped or not, as a client's free text might. */
const AWKWARD = ['a,', ':null,', ':null}', '","X":null,"', '"Price":5', 'back\\slash', 'x":null', '{"A":null}', ',', ''];

/** Flat records as the codec stores them (JSON.stringify of an object of scalars and arrays of scalars). */
function records(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const s of AWKWARD) {
    for (const t of AWKWARD) {
      out.push({ A: null, Price: 5, Tags: [s, t], B: s, C: null, Counts: [1, -2.5, 3e21], D: t, E: null });
      out.push({ Tags: [s, t, ':null,'], Price: null, F: null });
      out.push({ Z: s, Y: [t, s], X: null });
    }
  }
  return out;
}

describe('The record codec: in-place edits of the stored text', function () {
  it('withoutNulls is parsing, dropping null members and writing again, even where array elements mimic a null member', function () {
    for (const r of records()) {
      const json = JSON.stringify(r);
      expect(withoutNulls(json), json).to.equal(JSON.stringify(Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null))));
    }
    // The case the fast path cannot tell from a null member: an element ending in `,` before one beginning `:null,`.
    expect(withoutNulls('{"Tags":["a,",":null,"],"B":null}')).to.equal('{"Tags":["a,",":null,"]}');
  });

  it('numbersAsStrings writes the named fields\' numbers as strings, single or in arrays, and nothing else', function () {
    const edit = numbersAsStrings(['Price', 'Counts']);
    for (const r of records()) {
      const json = JSON.stringify(r);
      const expected = Object.fromEntries(Object.entries(r).map(([k, v]) => [k,
        (k === 'Price' || k === 'Counts') && v !== null ? (Array.isArray(v) ? v.map(String) : String(v)) : v]));
      expect(edit(json), json).to.equal(JSON.stringify(expected));
    }
    expect(numbersAsStrings([])('{"Price":5}')).to.equal('{"Price":5}');
  });

  it('a restamp replaces the one member holding the column\'s timestamp, as encoding the record with the new one does', function () {
    const media = serviceModel.entitySets.find((s) => s.name === 'Media')!;
    const encode = recordEncoder(media, serviceModel.tables.find((t) => t.name === media.table)!, serviceModel.lookups);
    const old = '2024-01-01T00:00:00.000Z';
    const now = '2024-02-02T12:34:56.789Z';
    const { column, before, after } = timestampEdit(media, media.changeTimestamp!);
    // Free text that holds the member's text as a client might write it: in the stored text its quotes are escaped.
    const text = `${before}${old}${after} and "ModificationTimestamp":"${old}"`;
    const record = { MediaKey: 'M1', ModificationTimestamp: old, LongDescription: text, MediaObjectID: old };
    const stored = encode(record);
    expect(column).to.equal(media.fieldsByName.ModificationTimestamp.column);
    expect(stored.json.split(before + old + after)).to.have.length(2);
    expect(stored.json.replace(before + old + after, before + now + after)).to.equal(encode({ ...record, ModificationTimestamp: now }).json);
    expect(() => timestampEdit(media, 'MediaKey')).to.throw(/no timestamp kept in a column/);
  });
});
