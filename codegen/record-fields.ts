/**
 * What the record emitters (typed entities, record schemas) agree on about a field's values: its closed lookup, the
 * column storing it and that column's bounds, and the facets a reader is told about. The record schema's bounds are
 * read as the runtime reads them, by src/model/field-facets.ts.
 */
import type { ColumnSpec, FieldSpec, LookupSpec } from '../src/model/service-model';
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';

/** The lookup whose values the field must take; undefined for an open lookup (named, its values not declared) or none. */
export function closedLookup(model: BuiltModel, field: FieldSpec): LookupSpec | undefined {
  return field.lookupName === undefined ? undefined : model.lookups.find((l) => l.name === field.lookupName);
}

/**
 * The bounds of the column a field is stored in, where the dictionary states none: a string without MaxLength
 * in a column of the storage default's length, a decimal without Precision in the default precision.
 */
export function columnBounds(model: BuiltModel, set: BuiltEntitySet, field: FieldSpec): { length?: number; precision?: number; scale?: number } {
  const column = columnOf(model, set, field);
  return column ? { length: column.length, precision: column.precision, scale: column.scale } : {};
}

/** The column a field is stored in, if it has one. */
export function columnOf(model: BuiltModel, set: BuiltEntitySet, field: FieldSpec): ColumnSpec | undefined {
  return field.column ? model.tables.find((t) => t.name === set.table)?.columns.find((c) => c.name === field.column) : undefined;
}

/** The field's type and facets as the dictionary states them: `Edm.Decimal, Precision 14, Scale 2; lookup Colour`. */
export function facetsOf(model: BuiltModel, field: FieldSpec): string {
  const type = field.collection ? `Collection(${field.type})` : field.type;
  const facets = [
    field.maxLength !== undefined ? `MaxLength ${field.maxLength}` : undefined,
    field.precision !== undefined ? `Precision ${field.precision}` : undefined,
    field.scale !== undefined ? `Scale ${field.scale}` : undefined,
  ].filter((f): f is string => f !== undefined);
  const lookup = field.lookupName === undefined ? ''
    : closedLookup(model, field) ? `; lookup ${field.lookupName}` : `; open lookup ${field.lookupName} (its values are not in the dictionary)`;
  return `${[type, ...facets].join(', ')}${lookup}`;
}
