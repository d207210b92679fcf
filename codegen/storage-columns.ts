/** How the generator names and types a field's column (build-model.ts, value-tables.ts). */
import { createHash } from 'node:crypto';
import type { ColumnType, FieldSpec } from '../src/model/service-model';

/** A name within MariaDB's 64 characters: a longer one is shortened with a hash of it whole. */
export function fitName(name: string): string {
  if (name.length <= 64) return name;
  return `${name.slice(0, 51)}_${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
}

/** The column type a field of each EDM primitive is stored in. */
export function columnType(f: FieldSpec): ColumnType {
  switch (f.type) {
    case 'Edm.String': case 'Edm.Guid': return 'string';
    case 'Edm.Boolean': return 'boolean';
    case 'Edm.Int16': case 'Edm.Int32': case 'Edm.Int64': return 'integer';
    case 'Edm.Decimal': return 'decimal';
    case 'Edm.Double': return 'double';
    case 'Edm.Date': return 'date';
    case 'Edm.DateTimeOffset': return 'timestamp';
    case 'Edm.TimeOfDay': return 'string';
  }
}
