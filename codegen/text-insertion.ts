/**
 * Inserts elements into an XML text and changes nothing else: comments, order, attributes, spacing and line
 * endings stay as the author wrote them, so the difference is only the inserted lines (and, for an element written
 * self-closing that receives children, its `/>` becoming `>` and a closing tag). Indentation follows the text's
 * own: one step deeper than the element (the step the text uses), or inline when the element is not on a line of
 * its own (a dictionary written as one line stays one line).
 */
import type { XmlElement, XmlOutline } from './xml-outline';

export interface Insertion {
  readonly into: XmlElement;
  /** Before which child: by default after the last one. */
  readonly before?: XmlElement;
  /** The elements to insert, each as lines indented from itself by two spaces a level. */
  readonly elements: readonly string[];
}

const LEVEL = '  ';

/** Inserts each insertion; `comment`, when given, goes first at each place, saying who inserted what follows. */
export function insertInto(outline: XmlOutline, insertions: readonly Insertion[], comment?: string): string {
  const { text } = outline;
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  const marked = merged(insertions).map((i) => (comment ? { ...i, elements: [`<!-- ${comment} -->`, ...i.elements] } : i));
  const edits = marked.map((i) => edit(text, i, newline));
  let out = text;
  for (const e of edits.sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.text + out.slice(e.at + e.replaces);
  return out;
}

/** One insertion per place, in the order given: an element written self-closing is opened once. */
function merged(insertions: readonly Insertion[]): Insertion[] {
  const byPlace = new Map<string, Insertion>();
  for (const i of insertions) {
    const place = `${i.into.start}:${i.before?.start ?? 'end'}`;
    const had = byPlace.get(place);
    byPlace.set(place, had ? { ...had, elements: [...had.elements, ...i.elements] } : i);
  }
  return [...byPlace.values()];
}

interface Edit {
  readonly at: number;
  /** Characters replaced at `at` (the `/>` of a self-closing element). */
  readonly replaces: number;
  readonly text: string;
}

function edit(text: string, insertion: Insertion, newline: string): Edit {
  const { into, before } = insertion;
  const own = indentOf(text, into.start);
  const step = stepOf(text, into);
  if (own === undefined) {
    // Inline: the element shares its line with other markup.
    const inline = insertion.elements.map((e) => e.split('\n').map((l) => l.trim()).join('')).join('');
    if (before) return { at: before.start, replaces: 0, text: inline };
    if (into.selfClosing) return selfClosingEdit(text, into, `>${inline}</${into.name}>`);
    return { at: into.closeStart, replaces: 0, text: inline };
  }
  const lines = (indent: string) => insertion.elements
    .flatMap((e) => e.split('\n'))
    .map((l) => indent + l.replace(/^((?: {2})*)/, (m) => step.repeat(m.length / LEVEL.length)));
  const childIndent = own + step;
  if (before) {
    const beforeIndent = indentOf(text, before.start);
    if (beforeIndent !== undefined) return { at: lineStart(text, before.start), replaces: 0, text: lines(beforeIndent).map((l) => l + newline).join('') };
    return { at: before.start, replaces: 0, text: lines(childIndent).join(newline) + newline + own };
  }
  if (into.selfClosing) return selfClosingEdit(text, into, `>${newline}${lines(childIndent).join(newline)}${newline}${own}</${into.name}>`);
  if (indentOf(text, into.closeStart) !== undefined) {
    return { at: lineStart(text, into.closeStart), replaces: 0, text: lines(childIndent).map((l) => l + newline).join('') };
  }
  return { at: into.closeStart, replaces: 0, text: newline + lines(childIndent).join(newline) + newline + own };
}

/** Replaces the `/>` ending a self-closing start tag (and the spaces before it). */
function selfClosingEdit(text: string, element: XmlElement, replacement: string): Edit {
  let at = element.startTagEnd - 2;
  while (at > element.start && /\s/.test(text[at - 1])) at--;
  return { at, replaces: element.startTagEnd - at, text: replacement };
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** The whitespace before `offset` on its line, or undefined when other text comes first. */
function indentOf(text: string, offset: number): string | undefined {
  const before = text.slice(lineStart(text, offset), offset);
  return /^[ \t]*$/.test(before) ? before : undefined;
}

/** The text's indentation step, as seen at this element: its children's, or its own from its parent's; else two spaces. */
function stepOf(text: string, element: XmlElement): string {
  const own = indentOf(text, element.start);
  const child = element.children.map((c) => indentOf(text, c.start)).find((i) => i !== undefined);
  if (own !== undefined && child !== undefined && child.length > own.length && child.startsWith(own)) return child.slice(own.length);
  const parent = element.parent && indentOf(text, element.parent.start);
  if (own !== undefined && parent !== undefined && own.length > parent.length && own.startsWith(parent)) return own.slice(parent.length);
  return LEVEL;
}
