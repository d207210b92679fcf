/**
 * The replica digest's call, `<Set>/<Namespace>.Digest(From=…,To=…,Parts=…)` (docs/replication.md): its
 * parameters read from the path's parentheses (OData 4.01 URL conventions: `name=literal` or `name=@alias`, the
 * alias's value a query option; an alias not given is null), and the collection query that reads its records:
 * the key and the timestamp of the keys in [From, To), in key order, as `$filter`, `$select` and `$orderby`
 * texts, so the digest's records are exactly those a client's own query of that range is served.
 */
import { Errors } from '../errors/catalogue';
import type { DigestFields } from '../model/service-model';

export const DIGEST_FUNCTION = 'Digest';

/** Sub-ranges a digest may answer, and how many when `Parts` is not given. */
export const DIGEST_PARTS = { min: 1, max: 64, default: 16 } as const;

export type KeyValue = string | number;

export interface DigestCall {
  /** Inclusive; null: from the first key. */
  readonly from: KeyValue | null;
  /** Exclusive; null: to the last key. */
  readonly to: KeyValue | null;
  readonly parts: number;
}

type Parameter = 'From' | 'To' | 'Parts';
const PARAMETERS: readonly Parameter[] = ['From', 'To', 'Parts'];

/** The call's parameters from the text inside its parentheses; `aliases`: the query options (`@name` → value). */
export function parseDigestCall(text: string, keyType: string, aliases: Readonly<Record<string, string>>): DigestCall {
  const given = new Map<Parameter, string>();
  for (const [name, raw] of parameterTexts(text)) {
    const parameter = PARAMETERS.find((p) => p === name);
    if (!parameter) throw invalid(name, `one of ${PARAMETERS.join(', ')}`);
    if (given.has(parameter)) throw invalid(name, 'given once');
    given.set(parameter, raw.startsWith('@') ? aliases[raw] ?? 'null' : raw);
  }
  return {
    from: keyLiteral('From', given.get('From'), keyType),
    to: keyLiteral('To', given.get('To'), keyType),
    parts: partsOf(given.get('Parts')),
  };
}

/** `name=value` pairs, split at commas outside string literals. */
function parameterTexts(text: string): [string, string][] {
  const out: [string, string][] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    else if ((c === ',' && !quoted) || i === text.length) {
      const item = text.slice(start, i).trim();
      start = i + 1;
      if (item === '' && i === text.length && out.length === 0) break;
      const eq = item.indexOf('=');
      if (eq <= 0) throw invalid(item || '(empty)', 'written name=value');
      out.push([item.slice(0, eq).trim(), item.slice(eq + 1).trim()]);
    }
  }
  if (quoted) throw invalid(text, 'a string literal closed by a quote');
  return out;
}

function keyLiteral(parameter: Parameter, raw: string | undefined, keyType: string): KeyValue | null {
  if (raw === undefined || raw === 'null') return null;
  if (keyType === 'Edm.String') {
    const inside = raw.slice(1, -1);
    if (raw.length >= 2 && raw.startsWith("'") && raw.endsWith("'") && !inside.replace(/''/g, '').includes("'")) return inside.replace(/''/g, "'");
    throw invalid(parameter, "a key in quotes ('…', a quote inside doubled) or null", raw);
  }
  if (/^-?\d{1,15}$/.test(raw)) return Number(raw);
  throw invalid(parameter, 'an integer key or null', raw);
}

function partsOf(raw: string | undefined): number {
  if (raw === undefined || raw === 'null') return DIGEST_PARTS.default;
  const n = /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= DIGEST_PARTS.min && n <= DIGEST_PARTS.max)) throw invalid('Parts', `an integer from ${DIGEST_PARTS.min} to ${DIGEST_PARTS.max}`, raw);
  return n;
}

function invalid(parameter: string, expected: string, got?: string): Error {
  return Errors.ParameterInvalid(DIGEST_FUNCTION, parameter, expected, got);
}

/** A key as a URL literal: a string in quotes (a quote inside doubled), a number as it is. */
export function keyLiteralText(value: KeyValue): string {
  return typeof value === 'string' ? `'${value.replace(/'/g, "''")}'` : String(value);
}

/** The query options of the call's read: its key range, the key and the timestamp, in key order. */
export function digestQueryOptions(fields: DigestFields, call: DigestCall): Record<string, string> {
  const key = fields.key.name;
  const bounds = [
    ...call.from === null ? [] : [`${key} ge ${keyLiteralText(call.from)}`],
    ...call.to === null ? [] : [`${key} lt ${keyLiteralText(call.to)}`],
  ];
  return {
    $select: `${key},${fields.timestamp.name}`,
    $orderby: `${key} asc`,
    ...bounds.length ? { $filter: bounds.join(' and ') } : {},
  };
}
