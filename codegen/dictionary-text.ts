/**
 * The dictionary as text, before its content is read (dictionary.ts): is it well-formed XML, is it CSDL, does
 * every element carry the attributes that name it, and is each name declared once where names must be unique?
 * fast-xml-parser's reader would take a second declaration silently (the generator then fails far from the
 * cause, or writes a module that does not compile), so these are refused here, each naming the file's line,
 * column and element. Also where a refusal found later is in the file (`refusalLine`).
 */
import { XMLValidator } from 'fast-xml-parser';
import { DictionaryError, ElementRef, TextPosition } from './dictionary-error';
import { childrenNamed, outlineOf, shownElement, XmlElement, XmlOutline } from './xml-outline';

const EDMX_NAMESPACE = 'http://docs.oasis-open.org/odata/ns/edmx';
const NO_SCHEMA = 'no <Schema> found under edmx:Edmx/edmx:DataServices';

/** The attributes each element of CSDL must carry (OASIS CSDL XML 4.01); the generator reads every one. */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  Include: ['Namespace'], Schema: ['Namespace'], EntityType: ['Name'], ComplexType: ['Name'], EnumType: ['Name'],
  Member: ['Name'], Property: ['Name', 'Type'], NavigationProperty: ['Name', 'Type'], PropertyRef: ['Name'],
  EntityContainer: ['Name'], EntitySet: ['Name', 'EntityType'], Singleton: ['Name', 'Type'],
  NavigationPropertyBinding: ['Path', 'Target'], Annotation: ['Term'], Term: ['Name', 'Type'],
};

/** Where names must be unique: under which element, among which children, and what the name is called. */
const UNIQUE: readonly { parent: string; children: readonly string[]; owner: string; what: string }[] = [
  { parent: 'Schema', children: ['EntityType', 'ComplexType', 'EnumType', 'TypeDefinition', 'Term', 'EntityContainer'], owner: 'schema', what: 'the name' },
  { parent: 'EntityType', children: ['Property', 'NavigationProperty'], owner: 'entity type', what: 'the property' },
  { parent: 'ComplexType', children: ['Property', 'NavigationProperty'], owner: 'complex type', what: 'the property' },
  { parent: 'EnumType', children: ['Member'], owner: 'lookup', what: 'the member' },
  { parent: 'EntityContainer', children: ['EntitySet', 'Singleton', 'ActionImport', 'FunctionImport'], owner: 'entity container', what: 'the set' },
];

/** Refuses text that is not a well-formed CSDL document with each name declared once; returns its outline. */
export function checkDictionaryText(text: string): XmlOutline {
  if (text.trim() === '') throw new DictionaryError('the file is empty: a data dictionary is a CSDL XML document (<edmx:Edmx>)', { line: 1 });
  if (/^\uFEFF?\s*[[{]/.test(text)) {
    throw new DictionaryError('this is JSON, not CSDL XML: give the dictionary as CSDL XML (the $metadata document in XML, <edmx:Edmx>)', { line: 1, column: 1 });
  }
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new DictionaryError(`not well-formed XML: ${valid.err.msg}`, { line: valid.err.line, column: valid.err.col });
  const outline = outlineOf(text);
  const [root, second] = outline.roots;
  if (second) throw new DictionaryError(`${shownElement(second)}: a second root element (an XML document has one)`, at(second));
  checkRoot(root);
  walk(root, (e) => {
    checkRequired(e);
    checkUnique(e);
  });
  return outline;
}

function checkRoot(root: XmlElement): void {
  const prefix = root.name.includes(':') ? root.name.slice(0, root.name.indexOf(':')) : '';
  const namespace = root.attributes.get(prefix ? `xmlns:${prefix}` : 'xmlns');
  if (root.local !== 'Edmx' || namespace !== EDMX_NAMESPACE) {
    const found = root.local === 'Edmx' ? `its namespace is ${namespace ?? 'not declared'}` : `its root element is ${shownElement(root)}`;
    throw new DictionaryError(`not a CSDL dictionary: ${found}, where CSDL XML has <edmx:Edmx xmlns:edmx="${EDMX_NAMESPACE}">`, at(root));
  }
  const services = childrenNamed(root, 'DataServices')[0];
  if (!services || childrenNamed(services, 'Schema').length === 0) throw new DictionaryError(`${shownElement(root)}: ${NO_SCHEMA}`, at(services ?? root));
}

function checkRequired(e: XmlElement): void {
  const required = REQUIRED[e.local] ?? [];
  const missing = required.filter((a) => !e.attributes.get(a)?.trim());
  if (missing.length) {
    throw new DictionaryError(`${shownElement(e)}: no ${missing.join(' or ')} attribute (a ${e.local} needs ${required.join(' and ')})`, at(e));
  }
}

function checkUnique(e: XmlElement): void {
  for (const rule of UNIQUE.filter((r) => r.parent === e.local)) {
    const first = new Map<string, XmlElement>();
    for (const child of e.children.filter((c) => rule.children.includes(c.local))) {
      const name = child.attributes.get('Name')!;
      const earlier = first.get(name);
      if (earlier) {
        const owner = e.attributes.get('Name') ?? e.attributes.get('Namespace');
        throw new DictionaryError(`${shownElement(child)}: ${rule.owner} ${owner} declares ${rule.what} ${name} twice (first at line ${earlier.line})`, at(child));
      }
      first.set(name, child);
    }
  }
}

function walk(e: XmlElement, visit: (e: XmlElement) => void): void {
  visit(e);
  for (const c of e.children) walk(c, visit);
}

const at = (e: XmlElement): TextPosition => ({ line: e.line, column: e.column });

/** The element a reference names, in the outline; undefined when the text has none such. */
export function locate(outline: XmlOutline, ref: ElementRef): XmlElement | undefined {
  const all: XmlElement[] = [];
  for (const root of outline.roots) walk(root, (e) => all.push(e));
  const named = (local: string, name: string, among: readonly XmlElement[] = all) => among.find((e) => e.local === local && e.attributes.get('Name') === name);
  switch (ref.kind) {
    case 'EntityType': case 'EnumType': case 'EntitySet':
      return named(ref.kind, ref.name);
    case 'Property': case 'NavigationProperty': {
      // A subject read from a message may name the type by its set's name.
      const set = named('EntitySet', ref.type);
      const type = named('EntityType', ref.type) ?? (set && named('EntityType', set.attributes.get('EntityType')!.split('.').pop()!));
      return type && (named(ref.kind, ref.name, type.children) ?? named('NavigationProperty', ref.name, type.children));
    }
    case 'NavigationPropertyBinding': {
      const set = named('EntitySet', ref.set);
      return set?.children.find((e) => e.local === ref.kind && e.attributes.get('Path') === ref.path);
    }
  }
}

/** The one line an operator reads for a refused dictionary: `file:line:column: message`, the position where known. */
export function refusalLine(e: DictionaryError, file: string, text: string): string {
  const position = positionOf(e, text);
  if (!position) return `${file}: ${e.message}`;
  return `${file}:${position.line}${position.column === undefined ? '' : `:${position.column}`}: ${e.message}`;
}

function positionOf(e: DictionaryError, text: string): TextPosition | undefined {
  if (e.at && 'line' in e.at) return e.at;
  const ref = e.at ?? subjectOf(e.message);
  if (!ref) return undefined;
  let outline: XmlOutline;
  try {
    outline = outlineOf(text);
  } catch {
    return undefined;
  }
  const element = locate(outline, ref) ?? (ref.kind === 'EntitySet' ? locate(outline, { kind: 'EntityType', name: ref.name }) : undefined);
  return element && { line: element.line, column: element.column };
}

/**
 * The element a refusal without a reference is about, by the subject its message begins with: every refusal
 * names its subject first (`entity set X:`, `entity type X:`, `lookup X:`, `X.Field:`, `X:`).
 */
function subjectOf(message: string): ElementRef | undefined {
  const m = /^(?:(entity set|entity type|lookup) (\w+)|(\w+)\.(\w+):|(\w+):)/.exec(message);
  if (!m) return undefined;
  if (m[1]) return { kind: m[1] === 'entity set' ? 'EntitySet' : m[1] === 'entity type' ? 'EntityType' : 'EnumType', name: m[2] };
  if (m[3]) return { kind: 'Property', type: m[3], name: m[4] };
  return { kind: 'EntitySet', name: m[5] };
}
