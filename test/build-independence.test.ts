/**
 * Any dictionary builds: `npm run build` compiles the server (tsconfig.json), and nothing it compiles depends on
 * the dictionary's names. generated/ is written for whatever dictionary is in place and compiles on its own, so a
 * field removed, retyped or renamed can fail the build only through a hand-written file that names it: one that
 * imports the field-typed entities (generated/entities.ts), or that writes a name the dictionary may not have.
 *
 * RESO's standard names do appear in two places, each a rule that applies only where the dictionary has the name with
 * a type that fits: the demo data (src/demo, proven on dictionaries with fields removed and retyped, RESO's own and
 * a minimal one in test/demo-dictionaries.test.ts), and the generator's conventions (listed below, each proven on
 * RESO's reference files and dictionaries without the names in test/full-dictionary, generator and init tests).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { expect } from 'chai';
import * as ts from 'typescript';
import { serviceModel } from '../generated';
import { REPO_ROOT } from './support/shared';

/** Every file `npm run build` compiles, as tsc reads tsconfig.json. */
function buildFiles(): string[] {
  const host: ts.ParseConfigFileHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(String(d.messageText)); } };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(REPO_ROOT, 'tsconfig.json'), {}, host)!;
  return parsed.fileNames.map((f) => resolve(f));
}

const shown = (file: string) => relative(REPO_ROOT, file).split(sep).join('/');
const handWritten = (file: string) => !shown(file).startsWith('generated/');

const GENERATED_ENTITIES = resolve(REPO_ROOT, 'generated/entities');

/** `file`'s imports (declarations, re-exports, `import('…')` types) that resolve to generated/entities. */
function entityImports(file: string, text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles
    .map((i) => i.fileName)
    .filter((spec) => spec.startsWith('.') && resolve(dirname(file), spec).replace(/(\.ts|\/index(\.ts)?)$/, '') === GENERATED_ENTITIES);
}

/** The code of a file without its comments: comments may name resources to explain; code may not. */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
const literalsOf = (code: string) => [...code.matchAll(/'([^'\\\n]*)'|"([^"\\\n]*)"|`([^`\\]*)`/g)].map((m) => m[1] ?? m[2] ?? m[3]);

/**
 * Words of a string literal that could be names; a qualified term (RESO.OData.Metadata.LookupName), a CSDL element
 * (`<Property`, `</Property>`) and an attribute (`Property="…"`) are the metadata's own syntax, not the dictionary's names.
 */
const namesIn = (text: string) => [...text.matchAll(/[A-Za-z0-9_]+/g)]
  .filter((m) => {
    const before = text.slice(Math.max(0, m.index! - 2), m.index);
    const after = text[m.index! + m[0].length];
    return !before.endsWith('.') && after !== '.' && after !== '=' && !before.endsWith('<') && before !== '</';
  })
  .map((m) => m[0]);

/**
 * Hand-written files allowed RESO's standard names, each for the rule it states. Every rule applies only where the
 * dictionary has the name with the type it needs (else the generator goes without it, or refuses in one line).
 */
const STANDARD_NAME_RULES: Readonly<Record<string, string>> = {
  'codegen/key-conventions.ts': 'RESO\'s key conventions for navigations declared without a referential constraint (ResourceRecordKey/ResourceName, <Navigation>Key)',
  'codegen/build-policy.ts': 'ModificationTimestamp as the change timestamp when none is tagged; where RESO\'s Lookup and Field resources keep each part of a row',
  'codegen/build-model.ts': 'ModificationTimestamp as the default order\'s timestamp when none is tagged',
  'codegen/build-change-log.ts': 'RCP-027\'s EntityEvent fields (ResourceName, ResourceRecordKey, ResourceRecordUrl)',
  'codegen/default-policy.ts': '`reso-server init`\'s defaults: the spec\'s listing fields, charged expansions and RESO\'s EntityEvent, Lookup and Field resources',
};

/** Words of CSDL, OData or SQL that a dictionary may also use as a name or lookup value, where they are that syntax. */
const SYNTAX: readonly { file: RegExp; word: string; why: string }[] = [
  { file: /^codegen\/(dictionary|dictionary-text|dictionary-error|policy-vocabulary|xml-outline)\.ts$/, word: 'Property', why: 'the CSDL element <Property>' },
  { file: /^codegen\/(dictionary|dictionary-text)\.ts$/, word: 'Member', why: 'the CSDL element <Member> of an EnumType' },
  { file: /^codegen\/default-policy\.ts$/, word: 'Property', why: 'the CSDL element <Property>' },
  { file: /^src\/storage\/sql\/filter-compiler\.ts$/, word: 'OR', why: 'SQL\'s OR (also a StateOrProvince value)' },
  { file: /^src\/metadata\/metadata-json\.ts$/, word: 'None', why: 'Capabilities.NavigationType/None (also a lookup value)' },
  { file: /^codegen\/emit-entities\.ts$/, word: 'S', why: 'a TypeScript type parameter (also a lookup value)' },
];

describe('Any dictionary builds: npm run build compiles the server, and nothing in it names the dictionary', () => {
  const files = buildFiles();
  const written = files.filter(handWritten);

  it('the build compiles codegen/, src/ and generated/ only: the tests, bench and certify compile in npm test, against the shipped dictionary', () => {
    const tops = new Set(files.map((f) => shown(f).split('/')[0]));
    expect([...tops].sort()).to.deep.equal(['codegen', 'generated', 'src']);
    expect(files.some((f) => shown(f).startsWith('src/console/web/')), 'the console is a program of its own').to.equal(false);
    expect(written.length, 'files read').to.be.greaterThan(200);
  });

  it('no hand-written file of the build imports generated/entities (generated/ itself always compiles)', () => {
    const found = written.flatMap((f) => entityImports(f, readFileSync(f, 'utf8')).map((spec) => `${shown(f)} imports ${spec}`));
    expect(found).to.deep.equal([]);
  });

  it('the import check finds such an import, a type-only one and an import() type included', () => {
    const at = join(REPO_ROOT, 'src/demo/example.ts');
    expect(entityImports(at, "import type { Entity } from '../../generated/entities';")).to.deep.equal(['../../generated/entities']);
    expect(entityImports(at, "export type P = import('../../generated/entities').Entity<'Property'>;")).to.have.length(1);
    expect(entityImports(at, "import { serviceModel } from '../../generated';")).to.deep.equal([]);
  });

  it('no string literal of the build is a set, field, navigation or lookup value (in src/, no word of one), but RESO\'s standard-name rules and syntax', () => {
    const names = new Set(serviceModel.entitySets.flatMap((s) => [s.name, ...s.pathAliases, ...s.fields.map((f) => f.name), ...s.navigations.map((n) => n.name)]));
    const values = new Set(serviceModel.lookups.flatMap((l) => l.values.map((v) => v.value)));
    const found: string[] = [];
    for (const file of written) {
      const path = shown(file);
      if (path.startsWith('src/demo/') || STANDARD_NAME_RULES[path]) continue;
      const syntax = new Set(SYNTAX.filter((s) => s.file.test(path)).map((s) => s.word));
      for (const text of literalsOf(codeOf(readFileSync(file, 'utf8')))) {
        // In src/ no word of a literal may be a name; the generator's literals are checked whole, as its messages to
        // the operator are sentences about RESO's concepts (a record "moves its ModificationTimestamp").
        const named = path.startsWith('src/') ? namesIn(text).filter((w) => names.has(w)) : names.has(text) ? [text] : [];
        const words = [...named, ...(values.has(text) ? [text] : [])].filter((w) => !syntax.has(w));
        if (words.length) found.push(`${path}: ${[...new Set(words)].join(', ')} in ${JSON.stringify(text.slice(0, 80))}`);
      }
    }
    expect(found).to.deep.equal([]);
  });

  it('each file allowed standard names or syntax words still uses them (the lists say what is true)', () => {
    const names = new Set(serviceModel.entitySets.flatMap((s) => [s.name, ...s.fields.map((f) => f.name), ...s.navigations.map((n) => n.name)]));
    const values = new Set(serviceModel.lookups.flatMap((l) => l.values.map((v) => v.value)));
    for (const path of Object.keys(STANDARD_NAME_RULES)) {
      const literals = literalsOf(codeOf(readFileSync(join(REPO_ROOT, path), 'utf8')));
      expect(literals.some((t) => namesIn(t).some((w) => names.has(w))), `${path} names a standard name`).to.equal(true);
    }
    for (const s of SYNTAX) {
      const users = written.map(shown).filter((p) => s.file.test(p));
      expect(users.length, `${s.file} matches a file`).to.be.greaterThan(0);
      const uses = users.some((p) => literalsOf(codeOf(readFileSync(join(REPO_ROOT, p), 'utf8'))).some((t) => t === s.word || namesIn(t).includes(s.word)));
      expect(uses, `${s.word} (${s.why}) is still written in ${s.file}`).to.equal(true);
      expect(names.has(s.word) || values.has(s.word), `${s.word} is still a name or value of the shipped dictionary`).to.equal(true);
    }
  });

  it('the literal check names a field written in code, and a lookup value', () => {
    const code = codeOf("const a = 'ListPrice'; // 'City'\nconst b = \"Active Under Contract\";");
    const literals = literalsOf(code);
    expect(literals).to.deep.equal(['ListPrice', 'Active Under Contract']);
    expect(namesIn(literals[0])).to.deep.equal(['ListPrice']);
    expect(serviceModel.lookups.some((l) => l.values.some((v) => v.value === literals[1]))).to.equal(true);
  });
});
