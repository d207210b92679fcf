/**
 * Parse stage for a request's query options: names are recognised case-insensitively and with or
 * without `$` (4.01), each option's text goes to its parser, and the result is a model-free tree.
 */
import { Errors } from '../errors/catalogue';
import type { ExpandItem, QueryOptionsTree, SelectItem } from './ast';
import { ExpressionParser, MAX_DEPTH } from './parse-expression';

const SYSTEM_OPTIONS = ['filter', 'orderby', 'select', 'expand', 'top', 'skip', 'count', 'skiptoken', 'format',
  'search', 'apply', 'compute', 'index', 'levels', 'deltatoken', 'schemaversion', 'id'] as const;
type SystemOption = (typeof SYSTEM_OPTIONS)[number];
const UNSUPPORTED: ReadonlySet<string> = new Set(['search', 'apply', 'compute', 'index', 'levels', 'deltatoken', 'schemaversion', 'id']);

export interface ParseLimits {
  /** Longest $filter accepted; longer ones are FilterTooLong. */
  maxFilterLength: number;
}

export const DEFAULT_LIMITS: ParseLimits = { maxFilterLength: 32 * 1024 };

/** Recognises a system query option name: `$filter`, `$Filter`, or (4.01) `filter`. Returns undefined for custom options. */
export function systemOptionName(name: string): SystemOption | undefined {
  const bare = name.startsWith('$') ? name.slice(1).toLowerCase() : name.toLowerCase();
  if (!(SYSTEM_OPTIONS as readonly string[]).includes(bare)) {
    if (name.startsWith('$')) throw Errors.OptionUnknown(name);
    return undefined;
  }
  // Without `$` only the lower-case 4.01 spelling counts; anything else is a custom option.
  if (!name.startsWith('$') && name !== bare) return undefined;
  return bare as SystemOption;
}

export function parseQueryOptions(raw: Readonly<Record<string, string>>, limits: ParseLimits = DEFAULT_LIMITS): QueryOptionsTree {
  const byName = new Map<SystemOption, { name: string; value: string }>();
  for (const [name, value] of Object.entries(raw)) {
    const option = systemOptionName(name);
    if (!option) continue;
    const prior = byName.get(option);
    if (prior) throw Errors.OptionRepeated(name, prior.name);
    byName.set(option, { name, value });
  }
  const text = (o: SystemOption) => byName.get(o)?.value;
  const filter = text('filter');
  if (filter !== undefined && filter.length > limits.maxFilterLength) {
    throw Errors.FilterTooLong(filter.length, limits.maxFilterLength);
  }
  const tree = parseOptionTexts({
    filter, orderby: text('orderby'), select: text('select'), expand: text('expand'), top: text('top'), skip: text('skip'),
    count: text('count'), skiptoken: text('skiptoken'), format: text('format'),
  }, [...byName.keys()].filter((o) => UNSUPPORTED.has(o)).map((o) => byName.get(o)!.name), 0);
  return { ...tree, texts: Object.fromEntries([...byName].map(([o, { value }]) => [o, value])) };
}

interface OptionTexts {
  filter?: string; orderby?: string; select?: string; expand?: string; top?: string; skip?: string;
  count?: string; skiptoken?: string; format?: string;
}

function parseOptionTexts(t: OptionTexts, unsupported: string[], depth: number): QueryOptionsTree {
  return {
    ...(t.filter !== undefined ? { filter: ExpressionParser.expression(nonEmpty(t.filter, '$filter'), '$filter') } : {}),
    ...(t.orderby !== undefined ? { orderby: ExpressionParser.orderBy(nonEmpty(t.orderby, '$orderby'), '$orderby') } : {}),
    ...(t.select !== undefined ? { select: parseSelect(t.select) } : {}),
    ...(t.expand !== undefined ? { expand: parseExpand(t.expand, depth) } : {}),
    ...(t.top !== undefined ? { top: nonNegativeInteger(t.top, '$top') } : {}),
    ...(t.skip !== undefined ? { skip: nonNegativeInteger(t.skip, '$skip') } : {}),
    ...(t.count !== undefined ? { count: booleanOption(t.count, '$count') } : {}),
    ...(t.skiptoken !== undefined ? { skiptoken: t.skiptoken } : {}),
    ...(t.format !== undefined ? { format: t.format } : {}),
    unsupported,
  };
}

function nonEmpty(v: string, option: string): string {
  if (v.trim() === '') throw Errors.QuerySyntax(option, 0, 'the option is empty');
  return v;
}

function nonNegativeInteger(v: string, option: string): number {
  if (!/^\d{1,15}$/.test(v)) throw Errors.OptionValueInvalid(option, 'a non-negative integer', v);
  return Number(v);
}

function booleanOption(v: string, option: string): boolean {
  const lower = v.toLowerCase();
  if (lower !== 'true' && lower !== 'false') throw Errors.OptionValueInvalid(option, 'true or false', v);
  return lower === 'true';
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseSelect(v: string): SelectItem[] {
  if (v.trim() === '') throw Errors.QuerySyntax('$select', 0, 'the option is empty');
  const items: SelectItem[] = [];
  let pos = 0;
  for (const raw of v.split(',')) {
    const item = raw.trim();
    const at = pos + raw.indexOf(item);
    pos += raw.length + 1;
    if (item === '*') { items.push({ path: ['*'], pos: at }); continue; }
    const path = item.split('/');
    if (!path.every((p) => NAME.test(p))) throw Errors.QuerySyntax('$select', at, `"${item}" is not a property name or *`);
    items.push({ path, pos: at });
  }
  return items;
}

/** Splits at `sep` outside quotes and parentheses. */
function splitTopLevel(v: string, sep: string, option: string): { text: string; pos: number }[] {
  const parts: { text: string; pos: number }[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === "'") {
      const close = v.indexOf("'", i + 1);
      if (close < 0) throw Errors.QuerySyntax(option, i, 'a quoted string is not closed');
      i = close;
      if (v[i + 1] === "'") i++;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') {
      if (--depth < 0) throw Errors.QuerySyntax(option, i, 'unbalanced ")"');
    } else if (c === sep && depth === 0) {
      parts.push({ text: v.slice(start, i), pos: start });
      start = i + 1;
    }
  }
  if (depth !== 0) throw Errors.QuerySyntax(option, v.length, 'unbalanced "("');
  parts.push({ text: v.slice(start), pos: start });
  return parts;
}

const EXPAND_OPTIONS: ReadonlySet<string> = new Set(['select', 'filter', 'orderby', 'top', 'skip', 'count', 'expand', 'levels', 'search', 'compute', 'apply']);

export function parseExpand(v: string, depth = 0): ExpandItem[] {
  if (depth > MAX_DEPTH / 8) throw Errors.QuerySyntax('$expand', 0, 'expansions are nested too deep');
  if (v.trim() === '') throw Errors.QuerySyntax('$expand', 0, 'the option is empty');
  return splitTopLevel(v, ',', '$expand').map(({ text, pos }) => {
    const trimmed = text.trim();
    const open = trimmed.indexOf('(');
    const pathText = open < 0 ? trimmed : trimmed.slice(0, open);
    const path = pathText.split('/');
    if (!(path.length === 1 && path[0] === '*') && !path.every((p) => NAME.test(p) || p === '$ref' || p === '$count')) {
      throw Errors.QuerySyntax('$expand', pos, `"${pathText}" is not a navigation property path`);
    }
    if (open < 0) return { path, options: { unsupported: [] }, pos };
    if (!trimmed.endsWith(')')) throw Errors.QuerySyntax('$expand', pos + trimmed.length, 'expected ")" to close the options');
    const inner = trimmed.slice(open + 1, -1);
    const texts: Record<string, string> = {};
    const unsupported: string[] = [];
    for (const part of splitTopLevel(inner, ';', '$expand')) {
      const eq = part.text.indexOf('=');
      if (eq < 0) throw Errors.QuerySyntax('$expand', pos + open + 1 + part.pos, 'expected name=value in the expansion options');
      const name = part.text.slice(0, eq).trim();
      const bare = (name.startsWith('$') ? name.slice(1) : name).toLowerCase();
      if (!EXPAND_OPTIONS.has(bare)) throw Errors.QuerySyntax('$expand', pos + open + 1 + part.pos, `${name} is not an option of an expansion`);
      if (texts[bare] !== undefined) throw Errors.ExpandOptionRepeated(name, pathText);
      if (['levels', 'search', 'compute', 'apply'].includes(bare)) unsupported.push(`$${bare}`);
      texts[bare] = part.text.slice(eq + 1);
    }
    return { path, options: parseOptionTexts(texts, unsupported, depth + 1), pos };
  });
}
