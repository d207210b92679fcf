/**
 * SQL as values: text with `?` placeholders and the parameters in text order. Statements are composed from
 * fragments with the `sql` template tag, which only accepts fragments between its literal parts, so a value
 * can never reach the text: it enters as `param(v)`, an identifier as `SqlDialect.id(name)`.
 */
export interface Sql {
  readonly sql: string;
  readonly params: readonly unknown[];
}

const NO_PARAMS: readonly unknown[] = [];

/** Text that carries no values (keywords, operators, identifiers already quoted by a dialect). */
export function raw(text: string): Sql {
  return { sql: text, params: NO_PARAMS };
}

export function param(value: unknown): Sql {
  return { sql: '?', params: [value] };
}

/**
 * `sql\`substr(${a}, 1, ${b})\``: the fragments' texts in place and their parameters in text order. A fragment
 * used twice contributes its parameters twice, so dialect hooks may repeat or reorder their arguments freely.
 */
export function sql(strings: TemplateStringsArray, ...parts: readonly Sql[]): Sql {
  let text = strings[0];
  let params: unknown[] | undefined;
  for (let i = 0; i < parts.length; i++) {
    text += parts[i].sql + strings[i + 1];
    if (parts[i].params.length) append((params ??= []), parts[i].params);
  }
  return { sql: text, params: params ?? NO_PARAMS };
}

/** Fragments joined by `separator` (plain text such as `, ` or ` AND `). */
export function join(parts: readonly Sql[], separator: string): Sql {
  const params: unknown[] = [];
  for (const p of parts) append(params, p.params);
  return { sql: parts.map((p) => p.sql).join(separator), params };
}

/** Long lists (a multi-row insert's values) would overflow the call stack as spread arguments. */
function append(to: unknown[], from: readonly unknown[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]);
}

/** `(?, ?, ?)`-style placeholders for `n` values, without the values. */
export function placeholders(n: number): string {
  return n === 1 ? '?' : `?${', ?'.repeat(n - 1)}`;
}
