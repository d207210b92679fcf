/**
 * The elements of an XML text with where each stands in it: offsets, line and column. fast-xml-parser reads the
 * dictionary's content but keeps no positions; a refusal must name the line of the element it is about, and
 * `reso-server init` inserts its defaults into the operator's own text (everything else left as it was), so both
 * need the elements' places. Run on text fast-xml-parser's validator has accepted as well-formed: this scanner
 * trusts the structure and only keeps track of it (comments, CDATA, processing instructions and the doctype are
 * skipped whole).
 */

export interface XmlElement {
  /** As written, with its prefix (`edmx:Edmx`). */
  readonly name: string;
  /** Without its prefix (`Edmx`). */
  readonly local: string;
  /** By name as written; values with the five predefined entities and character references replaced. */
  readonly attributes: ReadonlyMap<string, string>;
  /** Offset of its `<`. */
  readonly start: number;
  /** Offset just after the `>` of its start tag. */
  readonly startTagEnd: number;
  readonly selfClosing: boolean;
  /** Offset of the `<` of its end tag (its start tag's end when self-closing). */
  closeStart: number;
  /** Offset just after the element. */
  end: number;
  readonly line: number;
  readonly column: number;
  readonly parent?: XmlElement;
  readonly children: XmlElement[];
}

export interface XmlOutline {
  readonly text: string;
  /** The root elements (one in well-formed XML). */
  readonly roots: readonly XmlElement[];
  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; column: number };
}

const NAME = /[A-Za-z_:][\w.:-]*/y;
const ATTRIBUTE = /\s*([A-Za-z_:][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;
const SKIPPED: readonly [open: string, close: string][] = [['<!--', '-->'], ['<![CDATA[', ']]>'], ['<?', '?>']];

export function outlineOf(text: string): XmlOutline {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const position = (offset: number) => {
    let [lo, hi] = [0, lineStarts.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo] + 1 };
  };

  const roots: XmlElement[] = [];
  let open: XmlElement | undefined;
  let i = text.indexOf('<');
  while (i >= 0) {
    const skipped = SKIPPED.find(([o]) => text.startsWith(o, i));
    if (skipped) {
      i = text.indexOf('<', afterMark(text, i, skipped[1]));
      continue;
    }
    if (text.startsWith('<!', i)) {
      i = text.indexOf('<', afterDoctype(text, i));
      continue;
    }
    if (text[i + 1] === '/') {
      const close = text.indexOf('>', i);
      if (!open) throw new Error(`an end tag without its start tag at offset ${i}`);
      open.closeStart = i;
      open.end = close + 1;
      open = open.parent;
      i = text.indexOf('<', close + 1);
      continue;
    }
    const element = startTag(text, i, open, position);
    (open ? open.children : roots).push(element);
    if (!element.selfClosing) open = element;
    i = text.indexOf('<', element.startTagEnd);
  }
  if (open) throw new Error(`<${open.name}> is not closed`);
  return { text, roots, position };
}

function startTag(text: string, at: number, parent: XmlElement | undefined, position: XmlOutline['position']): XmlElement {
  NAME.lastIndex = at + 1;
  const name = NAME.exec(text)![0];
  const attributes = new Map<string, string>();
  let i = NAME.lastIndex;
  for (;;) {
    ATTRIBUTE.lastIndex = i;
    const m = ATTRIBUTE.exec(text);
    if (!m) break;
    attributes.set(m[1], unescape(m[2] ?? m[3]));
    i = ATTRIBUTE.lastIndex;
  }
  const close = text.indexOf('>', i);
  const selfClosing = text[close - 1] === '/';
  const { line, column } = position(at);
  return {
    name, local: name.slice(name.indexOf(':') + 1), attributes, start: at, startTagEnd: close + 1, selfClosing,
    closeStart: close + 1, end: close + 1, line, column, parent, children: [],
  };
}

function afterMark(text: string, at: number, mark: string): number {
  const end = text.indexOf(mark, at);
  return end < 0 ? text.length : end + mark.length;
}

/** After `<!DOCTYPE …>`, whose internal subset (`[…]`) may hold `>`. */
function afterDoctype(text: string, at: number): number {
  let depth = 0;
  for (let i = at + 2; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']') depth--;
    else if (text[i] === '>' && depth <= 0) return i + 1;
  }
  return text.length;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescape(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (whole, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(Number(ref.slice(1)));
    return ENTITIES[ref] ?? whole;
  });
}

/** The element's children of a local name. */
export function childrenNamed(element: XmlElement, local: string): XmlElement[] {
  return element.children.filter((c) => c.local === local);
}

/** The element as a person finds it in the file: its start tag with the attribute that names it. */
export function shownElement(element: XmlElement): string {
  const naming = ['Name', 'Term', 'Path', 'Namespace'].find((a) => element.attributes.has(a));
  return naming ? `<${element.name} ${naming}="${element.attributes.get(naming)}">` : `<${element.name}>`;
}
