/**
 * Values that no other demo record of a set holds in a field, made from the record's ordinal (its place among the set's
 * demo records), of the field's type and within its bounds: keys, where the story has none that fits, and the listings'
 * identifiers that child records name them by.
 */
import { BASE_TIME, DAY } from './calendar';
import type { RecordBuilder } from './record-builder';

const EPOCH_DAY = Date.UTC(2000, 0, 1);

/** The value for the `ordinal`th record (from 0); undefined when the field cannot hold that many distinct values. */
export function uniqueValue(builder: RecordBuilder, field: string, ordinal: number): unknown {
  const f = builder.set.fieldsByName[field];
  if (!f || f.collection) return undefined;
  const n = ordinal + 1;
  let candidates: unknown[];
  switch (f.type) {
    case 'Edm.String': {
      const values = builder.lookups.of(f.lookupName);
      candidates = values ? [values[ordinal]] : [`${builder.set.name}-${String(n).padStart(6, '0')}`, n.toString(36)];
      break;
    }
    case 'Edm.Guid':
      candidates = [`00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`];
      break;
    case 'Edm.TimeOfDay': {
      const pad = (x: number) => String(x).padStart(2, '0');
      candidates = ordinal < 86_400 ? [`${pad(Math.floor(ordinal / 3600))}:${pad(Math.floor(ordinal / 60) % 60)}:${pad(ordinal % 60)}`] : [];
      break;
    }
    case 'Edm.Boolean':
      candidates = ordinal < 2 ? [ordinal === 1] : [];
      break;
    case 'Edm.Date':
      candidates = [new Date(EPOCH_DAY + ordinal * DAY)];
      break;
    case 'Edm.DateTimeOffset':
      candidates = [new Date(BASE_TIME - n * 1000)];
      break;
    default:
      candidates = [n];
  }
  return candidates.find((v) => builder.holdsExactly(field, v));
}
