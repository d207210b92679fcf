/**
 * The query compiler's own pieces of SQL: text with `?` placeholders and the values in text order. The filter
 * compiler and the keyset position are written by hand (the owner's design: query compilation and paging are
 * the handwritten part); what they make goes into a knex statement as one `whereRaw` with its bindings
 * (record-queries.ts). Fragments are composed with the `fragment` template tag, which takes only fragments
 * between its literal parts, so a value can never reach the text: it enters as `param(v)`, an identifier as
 * `SqlDialect.id(name)`.
 */
export interface Fragment {
  readonly sql: string;
  readonly params: readonly unknown[];
}

const NO_PARAMS: readonly unknown[] = [];

/** Text that carries no values (keywords, operators, identifiers already quoted by a dialect). */
export function raw(text: string): Fragment {
  return { sql: text, params: NO_PARAMS };
}

export function param(value: unknown): Fragment {
  return { sql: '?', params: [value] };
}

/**
 * `fragment\`substr(${a}, 1, ${b})\``: the fragments' texts in place and their values in text order. A fragment
 * used twice contributes its values twice, so dialect hooks may repeat or reorder their arguments freely.
 */
export function fragment(strings: TemplateStringsArray, ...parts: readonly Fragment[]): Fragment {
  let text = strings[0];
  let params: unknown[] | undefined;
  for (let i = 0; i < parts.length; i++) {
    text += parts[i].sql + strings[i + 1];
    if (parts[i].params.length) append((params ??= []), parts[i].params);
  }
  return { sql: text, params: params ?? NO_PARAMS };
}

/** Fragments joined by `separator` (plain text such as `, ` or ` AND `). */
export function join(parts: readonly Fragment[], separator: string): Fragment {
  const params: unknown[] = [];
  for (const p of parts) append(params, p.params);
  return { sql: parts.map((p) => p.sql).join(separator), params };
}

/** Long lists would overflow the call stack as spread arguments. */
function append(to: unknown[], from: readonly unknown[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]);
}

/** `?, ?, ?`: placeholders for `n` values, without the values. */
export function placeholders(n: number): string {
  return n === 1 ? '?' : `?${', ?'.repeat(n - 1)}`;
}
