/** Small DOM helpers: elements by id, and elements made with text only (data never becomes markup). */

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

type Attributes = Record<string, string | boolean | undefined>;

/** An element with attributes and children; strings become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attributes = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) node.append(child);
  return node;
}

export function clear(node: Element): void {
  node.replaceChildren();
}

/** A table body (and head) from rows of cells; numbers are right-aligned. */
export function fillTable(table: HTMLTableElement, head: readonly string[] | undefined, rows: readonly (readonly (string | number | Node)[])[]): void {
  if (head) table.tHead!.replaceChildren(el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h))));
  table.tBodies[0].replaceChildren(...rows.map((cells) => el('tr', {}, ...cells.map((c) => (
    typeof c === 'number' ? el('td', { class: 'num' }, String(c)) : el('td', {}, c)
  )))));
}

/** Calls `fn` once input has paused for `ms`. */
export function debounce(fn: () => void, ms: number): () => void {
  let timer: number | undefined;
  return () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(fn, ms);
  };
}
