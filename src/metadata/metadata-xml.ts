/**
 * The metadata document as EDMX XML, rendered by templates/metadata.xml.hbs (the build copies it beside this
 * module). The template is compiled once per process, when first used, in a handlebars environment of its own:
 * loading this module changes nothing global, and loads no handlebars (the published documents are generated
 * files, so a server whose clients hide nothing never renders).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Handlebars from 'handlebars';
import { LOOKUP_NAME_TERM, UNINDEXED_TERM } from './terms';
import { declaresUnindexed, type CsdlVersion, type MetadataView } from './metadata-view';

export const METADATA_TEMPLATE = join(__dirname, 'templates', 'metadata.xml.hbs');

/** What the template reads: the view, the version the document declares, and the terms it declares (if used). */
interface TemplateInput extends MetadataView {
  readonly version: CsdlVersion;
  readonly lookupNameTerm: typeof LOOKUP_NAME_TERM | false;
  /** Declared only when a set states unindexed fields. */
  readonly unindexedTerm: typeof UNINDEXED_TERM | false;
}

let template: Handlebars.TemplateDelegate<TemplateInput> | undefined;

export function metadataXml(view: MetadataView, version: CsdlVersion): string {
  template ??= compileTemplate();
  return template({ ...view, version, lookupNameTerm: view.annotations.lookupNames && LOOKUP_NAME_TERM, unindexedTerm: declaresUnindexed(view) && UNINDEXED_TERM });
}

/**
 * The escapers replace handlebars' HTML escaping (which also rewrites `'`, `=` and backquotes): the template
 * writes every value with triple braces through one of them. Names seldom hold a character to escape, so
 * each looks before it replaces.
 */
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const HELPERS = {
  text: (s: string) => (/[&<>]/.test(s) ? s.replace(/[&<>]/g, (c) => ENTITIES[c]) : s),
  attr: (s: string) => (/[&<>"]/.test(s) ? s.replace(/[&<>"]/g, (c) => ENTITIES[c]) : s),
  /** A comment may not contain `--`. */
  comment: (s: string) => s.replace(/--/g, '- -'),
};

function compileTemplate(): Handlebars.TemplateDelegate<TemplateInput> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const handlebars = (require('handlebars') as typeof Handlebars).create();
  handlebars.registerHelper(HELPERS);
  return handlebars.compile<TemplateInput>(readFileSync(METADATA_TEMPLATE, 'utf8'), {
    // A misspelt name in the template fails at once, never renders as nothing.
    strict: true,
    knownHelpers: { text: true, attr: true, comment: true },
    knownHelpersOnly: true,
  });
}
