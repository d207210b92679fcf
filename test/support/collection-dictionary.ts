/**
 * The shipped dictionary with some of Property's multi-value lookups (Collection(Edm.String)) made filterable
 * by the standard Capabilities term, as an operator would declare them: taken out of the set's
 * FilterRestrictions/NonFilterableProperties; `restricted` ones are marked Policy.Restricted. Generated into a
 * folder of the caller's, holding the repository's migrations first, so a database of the shipped dictionary migrates.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { generate } from '../../codegen/generate';
import type { ServiceModel } from '../../src/model/service-model';
import { loadGenerated } from './generated-folder';
import { REPO_ROOT } from './shared';

export function dictionaryWithFilterableCollections(dir: string, fields: readonly string[], restricted: readonly string[] = []): ServiceModel {
  let shipped = readFileSync(join(REPO_ROOT, 'csdl/reso-dictionary.xml'), 'utf8');
  for (const f of restricted) {
    const open = new RegExp(`<Property Name="${f}" Type="Collection\\(Edm.String\\)"[^>]*>`).exec(shipped)![0];
    shipped = shipped.replace(open, `${open}<Annotation Term="Policy.Restricted"/>`);
  }
  const start = shipped.indexOf('<EntitySet Name="Property"');
  const open = shipped.indexOf('<Annotation Term="Capabilities.FilterRestrictions">', start);
  const close = shipped.indexOf('</Annotation>', open);
  let restrictions = shipped.slice(open, close);
  for (const f of fields) {
    const edited = restrictions.replace(new RegExp(`\\s*<PropertyPath>${f}</PropertyPath>`), '');
    expect(edited, f).not.to.equal(restrictions);
    restrictions = edited;
  }
  writeFileSync(join(dir, 'dictionary.xml'), shipped.slice(0, open) + restrictions + shipped.slice(close));
  // On top of the repository's generated folder, as `npm run generate` would run: the change is the next migration.
  cpSync(join(REPO_ROOT, 'generated'), join(dir, 'generated'), { recursive: true });
  generate({ dictionary: join(dir, 'dictionary.xml'), outDir: join(dir, 'generated') });
  return loadGenerated(join(dir, 'generated'));
}
