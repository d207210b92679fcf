/**
 * Every dictionary error the generator can raise, one test each: a small dictionary (the `related` fixture,
 * edited to break one rule) goes in, and the generator refuses it with a message naming the problem,
 * writing nothing. Also the command line's and the literal writer's own refusals.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { DictionaryError } from '../codegen/dictionary';
import { generate } from '../codegen/generate';
import { literal } from '../codegen/typescript-source';
import { runCommandLine } from '../src/cli/main';
import { OperatorError } from '../src/errors/operator-error';
import { positionOf, runScript } from './support/node-script';
import { REPO_ROOT } from './support/shared';

const BASE = readFileSync(join(REPO_ROOT, 'test/fixtures/codegen/related/dictionary.xml'), 'utf8');

/** The base dictionary with one text replaced; fails if the text is not there, so a case cannot go stale silently. */
function edit(from: string | RegExp, to: string): string {
  const out = BASE.replace(from, to);
  if (out === BASE) throw new Error(`the base dictionary has no ${from}`);
  return out;
}

const PROPERTY_OF_PARENT = '<Property Name="Status" Type="Edm.String" MaxLength="25"/>';
const CHILD_POSITION = '<Property Name="Position" Type="Edm.Int32"/>';
/** The first ModificationTimestamp of the base, Parent's. */
const PARENT_TIMESTAMP = '<Property Name="ModificationTimestamp" Type="Edm.DateTimeOffset" Precision="3" Nullable="false"/>';
const PARENT_SET = '<EntitySet Name="Parent" EntityType="test.related.Parent">';
const UNINDEXED = (...fields: string[]) =>
  `<Annotation Term="Policy.UnindexedProperties">\n            <Collection>\n${fields.map((f) => `              <PropertyPath>${f}</PropertyPath>\n`).join('')}            </Collection>\n          </Annotation>`;
const UNINDEXED_OF_PARENT = UNINDEXED('Rating');
const LOOKUP = (members: string) => `<EnumType Name="Colour">${members}</EnumType>`;
const STANDARD_NAMED = (name: string, standardName: string) =>
  `<Member Name="${name}" Value="1"><Annotation Term="RESO.OData.Metadata.StandardName" String="${standardName}"/></Member>`;
const EMPTY_EDMX = (inner: string) =>
  `<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices>${inner}</edmx:DataServices></edmx:Edmx>`;

const CASES: { rule: string; dictionary: () => string; error: RegExp }[] = [
  // Reading the dictionary (codegen/dictionary.ts)
  { rule: 'a dictionary has a schema', dictionary: () => EMPTY_EDMX(''), error: /^<edmx:Edmx>: no <Schema> found under edmx:Edmx\/edmx:DataServices$/ },
  {
    rule: 'some schema declares entity types',
    dictionary: () => EMPTY_EDMX('<Schema Namespace="x" xmlns="http://docs.oasis-open.org/odata/ns/edm"><EnumType Name="E"/></Schema>'),
    error: /^no schema declares entity types$/,
  },
  {
    rule: 'an entity type has exactly one key property',
    dictionary: () => edit('<Key><PropertyRef Name="ChildKey"/></Key>', '<Key><PropertyRef Name="ChildKey"/><PropertyRef Name="Position"/></Key>'),
    error: /^entity type Child: exactly one key property is supported, found 2$/,
  },
  { rule: 'a dictionary has an entity container', dictionary: () => edit(/<EntityContainer[\s\S]*<\/EntityContainer>/, ''), error: /^no <EntityContainer> found$/ },
  {
    rule: 'a lookup declares each member once',
    dictionary: () => edit('<EntityType Name="Parent">', `${LOOKUP('<Member Name="Red" Value="0"/><Member Name="Blue" Value="1"/><Member Name="Red" Value="2"/>')}<EntityType Name="Parent">`),
    error: /^<Member Name="Red">: lookup Colour declares the member Red twice \(first at line \d+\)$/,
  },
  {
    rule: 'a lookup gives each member a standard name of its own',
    dictionary: () => edit('<EntityType Name="Parent">', `${LOOKUP(`<Member Name="Red" Value="0"/>${STANDARD_NAMED('Crimson', 'Red')}`)}<EntityType Name="Parent">`),
    error: /^lookup Colour: members Red and Crimson have the same standard name "Red"$/,
  },
  { rule: 'facets are integers', dictionary: () => edit('MaxLength="25"', 'MaxLength="12.5"'), error: /^expected an integer facet, got "12\.5"$/ },
  // The text before its content (codegen/dictionary-text.ts): well-formed, CSDL, each name declared once
  { rule: 'a dictionary is well-formed XML', dictionary: () => edit('</EntityType>\n      <EntityType Name="Child">', '\n      <EntityType Name="Child">'), error: /^not well-formed XML: Expected closing tag 'EntityType' \(opened in line \d+, col \d+\) instead of closing tag 'Schema'\.$/ },
  { rule: 'a dictionary is XML, not JSON', dictionary: () => '{"$Version": "4.0", "$EntityContainer": "x.Default"}', error: /^this is JSON, not CSDL XML: give the dictionary as CSDL XML/ },
  { rule: 'a dictionary is not empty', dictionary: () => ' \n', error: /^the file is empty: a data dictionary is a CSDL XML document/ },
  { rule: 'a dictionary is CSDL', dictionary: () => '<html><body>Not Found</body></html>', error: /^not a CSDL dictionary: its root element is <html>, where CSDL XML has <edmx:Edmx xmlns:edmx="http:\/\/docs\.oasis-open\.org\/odata\/ns\/edmx">$/ },
  { rule: 'a dictionary is in the EDMX namespace', dictionary: () => edit('xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"', 'xmlns:edmx="urn:other"'), error: /^not a CSDL dictionary: its namespace is urn:other/ },
  { rule: 'a document has one root element', dictionary: () => `${BASE}<edmx:Edmx Version="4.0"/>\n`, error: /^<edmx:Edmx>: a second root element \(an XML document has one\)$/ },
  { rule: 'a property has a name and a type', dictionary: () => edit(PROPERTY_OF_PARENT, `${PROPERTY_OF_PARENT}<Property Name="Untyped"/>`), error: /^<Property Name="Untyped">: no Type attribute \(a Property needs Name and Type\)$/ },
  { rule: 'an entity set names its entity type', dictionary: () => edit('<EntitySet Name="Child" EntityType="test.related.Child">', '<EntitySet Name="Child">'), error: /^<EntitySet Name="Child">: no EntityType attribute \(an? EntitySet needs Name and EntityType\)$/ },
  { rule: 'a type declares each property once', dictionary: () => edit(PROPERTY_OF_PARENT, `${PROPERTY_OF_PARENT}\n        <Property Name="Status" Type="Edm.Int32"/>`), error: /^<Property Name="Status">: entity type Parent declares the property Status twice \(first at line \d+\)$/ },
  { rule: 'a property and a navigation of a type have different names', dictionary: () => edit(PROPERTY_OF_PARENT, `${PROPERTY_OF_PARENT}<NavigationProperty Name="Status" Type="test.related.Owner"/>`), error: /^<NavigationProperty Name="Status">: entity type Parent declares the property Status twice/ },
  { rule: 'a container declares each set once', dictionary: () => edit('<Annotation Term="Capabilities.SkipSupported"', '<EntitySet Name="Child" EntityType="test.related.Child"/><Annotation Term="Capabilities.SkipSupported"'), error: /^<EntitySet Name="Child">: entity container Default declares the set Child twice \(first at line \d+\)$/ },
  { rule: 'a schema declares each type once', dictionary: () => edit('<EntityType Name="Owner">', '<EntityType Name="Parent"><Key><PropertyRef Name="K"/></Key><Property Name="K" Type="Edm.String"/></EntityType><EntityType Name="Owner">'), error: /^<EntityType Name="Parent">: schema test\.related declares the name Parent twice \(first at line \d+\)$/ },
  // Deciding the model (codegen/build-model.ts)
  {
    rule: 'an entity set names a declared entity type',
    dictionary: () => edit('EntityType="test.related.Child"', 'EntityType="test.related.Nobody"'),
    error: /^entity set Child: unknown entity type test\.related\.Nobody$/,
  },
  {
    rule: 'names are simple identifiers (fields)',
    dictionary: () => edit(PROPERTY_OF_PARENT, `${PROPERTY_OF_PARENT}<Property Name="Status-Code" Type="Edm.Int32"/>`),
    error: /^Parent\.Status-Code: "Status-Code" is not a simple identifier this server can store$/,
  },
  {
    rule: 'names are simple identifiers (entity sets)',
    dictionary: () => edit('<EntitySet Name="Child"', '<EntitySet Name="Child_Set_Named_Far_Too_Long_For_Any_Database_To_Take_As_A_Table_Name"'),
    error: /^entity set Child_Set_\w+: "Child_Set_\w+" is not a simple identifier this server can store$/,
  },
  {
    rule: 'names are simple identifiers (path aliases)',
    dictionary: () => edit('String="Parents"', 'String="Parents/All"'),
    error: /^path of Parent: "Parents\/All" is not a simple identifier this server can store$/,
  },
  {
    rule: 'restrictions name fields of the set',
    dictionary: () => edit('<PropertyPath>Status</PropertyPath>', '<PropertyPath>Nope</PropertyPath>'),
    error: /^entity set Parent: restriction names unknown field Nope$/,
  },
  {
    rule: 'field types are EDM primitives the server stores',
    dictionary: () => edit(PROPERTY_OF_PARENT, '<Property Name="Status" Type="Edm.Binary"/>'),
    error: /^Parent\.Status: unsupported type Edm\.Binary$/,
  },
  {
    rule: 'an indexed string fits an index',
    dictionary: () => edit(PROPERTY_OF_PARENT, '<Property Name="Status" Type="Edm.String" MaxLength="600"/>'),
    error: /^Parent\.Status: MaxLength 600 is too long for an indexed field \(max 510\)$/,
  },
  {
    rule: 'a key is a string or integer',
    dictionary: () => edit('<Property Name="ChildKey" Type="Edm.String"', '<Property Name="ChildKey" Type="Edm.Boolean"'),
    error: /^entity type Child: key ChildKey must be a string or integer property$/,
  },
  {
    rule: 'the change timestamp (ModificationTimestamp unless tagged) is an Edm.DateTimeOffset',
    dictionary: () => edit(/(<EntityType Name="Child">[\s\S]*?)Type="Edm.DateTimeOffset" Precision="3"/, '$1Type="Edm.Date"'),
    error: /^entity type Child: change timestamp ModificationTimestamp must be Edm\.DateTimeOffset$/,
  },
  {
    rule: 'a navigation joins on a field of its target',
    dictionary: () => edit('<ReferentialConstraint Property="ParentKey"', '<ReferentialConstraint Property="Nowhere"'),
    error: /^Child: navigation joins on unknown field Nowhere$/,
  },
  {
    rule: 'an expansion is ordered by sortable fields of its target',
    dictionary: () => edit('String="Position"', 'String="Position, ParentKey"'),
    error: /^Parent\.Children: ExpandOrder names ParentKey, which is not a sortable field of Child$/,
  },
  {
    rule: 'a table has at most 60 indexes',
    dictionary: () => edit(PROPERTY_OF_PARENT, PROPERTY_OF_PARENT + Array.from({ length: 58 }, (_, i) => `<Property Name="F${i}" Type="Edm.Int32"/>`).join('')),
    error: /^Parent: 61 indexed fields exceed the limit of 60 \(list the ones to be answered by a bounded scan instead in the set's Policy\.UnindexedProperties\)$/,
  },
  // What a policy needs of the dictionary (codegen/build-model.ts, build-policy.ts)
  {
    rule: 'an entity type declares its key',
    dictionary: () => edit('<Key><PropertyRef Name="ChildKey"/></Key>', ''),
    error: /^entity type Child declares no key: add <Key><PropertyRef Name="…"\/><\/Key> naming the property that identifies its records$/,
  },
  {
    rule: 'the key names a property of the type',
    dictionary: () => edit('<Key><PropertyRef Name="ChildKey"/></Key>', '<Key><PropertyRef Name="ChildId"/></Key>'),
    error: /^entity type Child: its key ChildId is not one of its properties: declare <Property Name="ChildId" Type="Edm\.String" Nullable="false"\/>, or name another property in its <Key>$/,
  },
  {
    rule: 'the listing root has a change timestamp',
    dictionary: () => edit(PARENT_TIMESTAMP, '').replace(PARENT_SET, `${PARENT_SET}<Annotation Term="Policy.ListingRoot"/>`),
    error: /^entity set Parent is the listing root \(Policy\.ListingRoot\), which needs a change timestamp: add <Property Name="ModificationTimestamp" Type="Edm\.DateTimeOffset" Precision="3" Nullable="false"\/> to entity type Parent \(or tag an Edm\.DateTimeOffset property of it with Policy\.ChangeTimestamp\)$/,
  },
  {
    rule: 'a set whose timestamps related records move has a change timestamp',
    dictionary: () => edit(PARENT_TIMESTAMP, '<Property Name="Seen" Type="Edm.DateTimeOffset"><Annotation Term="Policy.MovedByRelated" String="Children"/></Property>'),
    error: /^entity set Parent has timestamps its related records move \(Policy\.MovedByRelated on Seen\), which needs a change timestamp: add <Property Name="ModificationTimestamp"/,
  },
  {
    rule: 'DeletedWhen names a field of the set',
    dictionary: () => edit(PARENT_SET, `${PARENT_SET}<Annotation Term="Policy.DeletedWhen" String="MlsStatus eq 'Delete'"/>`),
    error: /^entity set Parent: DeletedWhen: "MlsStatus eq 'Delete'" names unknown field MlsStatus, which Parent does not declare: add it as a single Edm\.String property, or change the condition$/,
  },
  {
    rule: 'DeletedWhen names a value the field\'s closed lookup holds (a renamed lookup value would make a condition that never holds)',
    dictionary: () => edit(PROPERTY_OF_PARENT, '<Property Name="Status" Type="test.related.Colour"/>')
      .replace('<EntityType Name="Parent">', `${LOOKUP('<Member Name="Active" Value="0"/><Member Name="Removed" Value="1"/>')}<EntityType Name="Parent">`)
      .replace(PARENT_SET, `${PARENT_SET}<Annotation Term="Policy.DeletedWhen" String="Status eq 'Delete'"/>`),
    error: /^entity set Parent: DeletedWhen: "Status eq 'Delete'": 'Delete' is not a value of the lookup Colour \('Active', 'Removed'\): add it to the lookup, or change the condition$/,
  },
  {
    rule: 'a navigation binding names a set of the container',
    dictionary: () => edit('<NavigationPropertyBinding Path="Children" Target="Child"/>', '<NavigationPropertyBinding Path="Children" Target="Kids"/>'),
    error: /^entity set Parent: NavigationPropertyBinding Path="Children" Target="Kids": the container has no entity set Kids: add that set, or bind Children to one of the container's sets$/,
  },
  {
    rule: 'a navigation binding names a navigation of the type',
    dictionary: () => edit('<NavigationPropertyBinding Path="Children" Target="Child"/>', '<NavigationPropertyBinding Path="Kids" Target="Child"/>'),
    error: /^entity set Parent: NavigationPropertyBinding Path="Kids" Target="Child": entity type Parent has no navigation property Kids: correct the Path, or remove the binding$/,
  },
  {
    rule: 'a navigation binding leads to a set of its type',
    dictionary: () => edit('<NavigationPropertyBinding Path="Parent" Target="Parent"/>', '<NavigationPropertyBinding Path="Parent" Target="Child"/>'),
    error: /^entity set Child: NavigationPropertyBinding Path="Parent" Target="Child": Child holds test\.related\.Child, but Parent leads to test\.related\.Parent$/,
  },
  {
    rule: 'anything else the generator cannot read is refused as the dictionary\'s, saying so (an element where a path\'s text belongs)',
    dictionary: () => edit('<PropertyPath>Secret</PropertyPath>', '<PropertyPath><Secret/></PropertyPath>'),
    error: /^the generator cannot read this dictionary \(.+\); its checks should have named the cause: please report it with the dictionary$/,
  },
  // Fields answered without an index (Policy.UnindexedProperties, codegen/build-policy.ts)
  {
    rule: 'fields answered without an index are fields of the set',
    dictionary: () => edit(UNINDEXED_OF_PARENT, UNINDEXED('Rating', 'Colour')),
    error: /^entity set Parent: UnindexedProperties names Colour, which is not a field of Parent$/,
  },
  {
    rule: 'a collection is answered from its value table, not without an index',
    dictionary: () => edit(UNINDEXED_OF_PARENT, UNINDEXED('Tags')),
    error: /^entity set Parent: UnindexedProperties names Tags, a collection: a filterable collection is answered from its own value table$/,
  },
  {
    rule: 'the key and the change timestamp keep their indexes',
    dictionary: () => edit(UNINDEXED_OF_PARENT, UNINDEXED('ModificationTimestamp')),
    error: /^entity set Parent: UnindexedProperties names ModificationTimestamp, which orders every page and is always indexed$/,
  },
  {
    rule: 'a field answered without an index is filterable or sortable',
    dictionary: () => edit(UNINDEXED_OF_PARENT, UNINDEXED('Secret')),
    error: /^entity set Parent: UnindexedProperties names Secret, which is neither filterable nor sortable: nothing would read it$/,
  },
  {
    rule: 'a field whose filter orders by it keeps its index',
    dictionary: () => edit(PROPERTY_OF_PARENT, `${PROPERTY_OF_PARENT}<Property Name="Seen" Type="Edm.DateTimeOffset"><Annotation Term="Policy.OrdersWhenFiltered"/></Property>`)
      .replace(UNINDEXED_OF_PARENT, UNINDEXED('Seen')),
    error: /^entity set Parent: UnindexedProperties names Seen, whose filter orders by it \(OrdersWhenFiltered\): it needs its index$/,
  },
  {
    rule: 'a field navigations join on keeps its index',
    dictionary: () => edit('<PropertyPath>ParentKey</PropertyPath>', '')
      .replace('<NavigationPropertyBinding Path="Parent" Target="Parent"/>', `<NavigationPropertyBinding Path="Parent" Target="Parent"/>${UNINDEXED('ParentKey')}`),
    error: /^Child\.ParentKey: listed in UnindexedProperties, but a navigation joins on it, which needs an index$/,
  },
  {
    rule: "a table's columns fit in a MariaDB row",
    dictionary: () => edit(PROPERTY_OF_PARENT, PROPERTY_OF_PARENT + Array.from({ length: 17 }, (_, i) => `<Property Name="Text${i}" Type="Edm.String" MaxLength="1000"/>`).join(''))
      .replace(UNINDEXED_OF_PARENT, UNINDEXED('Rating', ...Array.from({ length: 17 }, (_, i) => `Text${i}`))),
    error: /^Parent: its columns take 68\d\d\d bytes of a row, more than MariaDB's 65535 \(fewer filterable or sortable text fields, or shorter MaxLengths\)$/,
  },
  // Licence policy: which fields name another set's fields and lookups (codegen/build-policy.ts)
  {
    rule: 'values of a named field need a field that names it',
    dictionary: () => edit(CHILD_POSITION, '<Property Name="Position" Type="Edm.Int32"><Annotation Term="Policy.NamedFieldValue"/></Property>'),
    error: /^entity type Child: NamedFieldValue on Position, but no field is tagged NamesFieldOf to say which field they hold$/,
  },
  {
    rule: 'a field naming a field is a single string',
    dictionary: () => edit(CHILD_POSITION, '<Property Name="Position" Type="Edm.Int32"><Annotation Term="Policy.NamesFieldOf" String="ParentKey"/></Property>'),
    error: /^Child\.Position: NamesFieldOf: only a single Edm\.String field can name a field$/,
  },
  {
    rule: 'a field naming a field says which other field names its set',
    dictionary: () => edit(CHILD_POSITION, `${CHILD_POSITION}<Property Name="Named" Type="Edm.String"><Annotation Term="Policy.NamesFieldOf" String="Nowhere"/></Property>`),
    error: /^Child\.Named: NamesFieldOf "Nowhere": not another single Edm\.String field of Child$/,
  },
  {
    rule: 'one field of a type names fields',
    dictionary: () => edit(CHILD_POSITION, `${CHILD_POSITION}${['A', 'B'].map((n) => `<Property Name="${n}" Type="Edm.String"><Annotation Term="Policy.NamesFieldOf" String="ParentKey"/></Property>`).join('')}`),
    error: /^entity type Child: more than one NamesFieldOf \(A, B\)$/,
  },
  {
    rule: 'a value of a named field is not the name itself',
    dictionary: () => edit(CHILD_POSITION, `${CHILD_POSITION}<Property Name="Named" Type="Edm.String"><Annotation Term="Policy.NamesFieldOf" String="ParentKey"/><Annotation Term="Policy.NamedFieldValue"/></Property>`),
    error: /^Child\.Named: NamedFieldValue on a field that names, not one that holds a value$/,
  },
  {
    rule: 'a field naming a lookup is a single string',
    dictionary: () => edit(CHILD_POSITION, '<Property Name="Position" Type="Edm.Int32"><Annotation Term="Policy.NamesLookup"/></Property>'),
    error: /^Child\.Position: NamesLookup: only a single Edm\.String field can name a lookup$/,
  },
  {
    rule: 'a path answers for one set only',
    dictionary: () => edit('String="Parents"', 'String="Child"'),
    error: /^path Child is claimed by both Parent and Child$/,
  },
];

describe('Generator: the dictionary errors it raises', () => {
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'reso-gen-errors-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts the base dictionary the cases break', () => {
    writeFileSync(join(dir, 'base.xml'), BASE);
    expect(generate({ dictionary: join(dir, 'base.xml'), outDir: join(dir, 'base-out') }).files).to.include('field-tables.ts');
  });

  CASES.forEach(({ rule, dictionary, error }, i) => {
    it(`refuses a dictionary that breaks the rule: ${rule}`, () => {
      const path = join(dir, `case-${i}.xml`);
      writeFileSync(path, dictionary());
      const outDir = join(dir, `out-${i}`);
      expect(() => generate({ dictionary: path, outDir })).to.throw(DictionaryError, error);
      expect(existsSync(outDir), 'nothing written').to.equal(false);
    });
  });
});

describe('Generator: its command line and its writer refuse what they cannot do', () => {
  it('reso-server generate names an unknown option and its help, and generates nothing', async () => {
    const nothing = () => { throw new Error('not to be used'); };
    const out = join(tmpdir(), `reso-gen-never-${process.pid}`);
    const refused = await runCommandLine(['generate', '--frobnicate', '--out', out], { log: nothing, config: nothing, withService: nothing })
      .then(() => undefined, (e: Error) => e.message);
    expect(refused).to.equal("generate: unknown option '--frobnicate' (see reso-server generate --help)");
    expect(existsSync(out)).to.equal(false);
  });

  it('the literal writer refuses a value that is not plain data', () => {
    expect(() => literal({ at: null })).to.throw(/^cannot write null as a literal$/);
    expect(literal({ a: 'it\'s', b: [1, true], c: undefined })).to.equal("{ a: 'it\\'s', b: [1, true] }");
  });
});

const runNode = (script: string, args: readonly string[]) => runScript(join(REPO_ROOT, script), args, { cwd: REPO_ROOT });

describe('Generator: a refused dictionary is one line naming the file, line, column and element, exit code 2', function () {
  this.timeout(120_000);
  const DUPLICATE = edit(PROPERTY_OF_PARENT, `${PROPERTY_OF_PARENT}\n        <Property Name="Status" Type="Edm.Int32"/>`);
  const UNBOUND = edit('<NavigationPropertyBinding Path="Children" Target="Child"/>', '<NavigationPropertyBinding Path="Children" Target="Kids"/>');
  const NOT_CLOSED = edit('</EntityType>\n      <EntityType Name="Child">', '\n      <EntityType Name="Child">');
  const REFUSALS = [
    { label: 'not well-formed', text: NOT_CLOSED, at: () => positionOf(NOT_CLOSED, '</Schema>', 2), line: /not well-formed XML: Expected closing tag 'EntityType' \(opened in line 19, col 7\) instead of closing tag 'Schema'\.$/ },
    { label: 'not CSDL', text: '<?xml version="1.0"?>\n<html><body>Not Found</body></html>\n', at: () => '2:1', line: /not a CSDL dictionary: its root element is <html>, where CSDL XML has <edmx:Edmx xmlns:edmx="[^"]+">$/ },
    { label: 'a property declared twice', text: DUPLICATE, at: () => positionOf(DUPLICATE, '<Property Name="Status"', 2), line: /<Property Name="Status">: entity type Parent declares the property Status twice \(first at line 23\)$/ },
    { label: 'a binding to a set the container does not have', text: UNBOUND, at: () => positionOf(UNBOUND, '<NavigationPropertyBinding Path="Children"'), line: /entity set Parent: NavigationPropertyBinding Path="Children" Target="Kids": the container has no entity set Kids: .+$/ },
  ];
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'reso-gen-refusals-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  REFUSALS.forEach(({ label, text, at, line }, i) => {
    it(`${label}: npm run generate's entry and reso-server generate each print one line, exit 2, and write nothing`, async () => {
      const file = join(dir, `refused-${i}.xml`);
      writeFileSync(file, text);
      const out = join(dir, `out-${i}`);
      const expected = new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:${at()}: ${line.source}`);
      const npm = await runNode('dist/codegen/main.js', ['--dictionary', file, '--out', out]);
      expect([npm.code, npm.stdout]).to.deep.equal([2, '']);
      expect(npm.stderr.split('\n')).to.have.length(2);
      expect(npm.stderr.trim().replace(/^generate failed: /, '')).to.match(expected);
      const cli = await runCommandLine(['generate', '--dictionary', file, '--out', out], { log: () => undefined, config: () => { throw new Error('unused'); }, withService: () => { throw new Error('unused'); } })
        .then(() => undefined, (e: unknown) => e);
      expect(cli).to.be.instanceOf(OperatorError);
      expect((cli as OperatorError).exitCode).to.equal(2);
      expect((cli as OperatorError).message).to.match(expected);
      expect(existsSync(out), 'nothing written').to.equal(false);
    });
  });

  it('reso-server generate as a process: the line after "reso-server: ", no stack trace; a file that is not there, the same way', async () => {
    const file = join(dir, 'duplicate.xml');
    writeFileSync(file, DUPLICATE);
    const r = await runNode('dist/src/cli/main.js', ['generate', '--dictionary', file, '--out', join(dir, 'never')]);
    expect([r.code, r.stdout]).to.deep.equal([2, '']);
    expect(r.stderr).to.equal(`reso-server: ${file}:${positionOf(DUPLICATE, '<Property Name="Status"', 2)}: <Property Name="Status">: entity type Parent declares the property Status twice (first at line 23)\n`);
    const missing = await runNode('dist/src/cli/main.js', ['generate', '--dictionary', join(dir, 'nowhere.xml'), '--out', join(dir, 'never')]);
    expect([missing.code, missing.stderr]).to.deep.equal([2, `reso-server: ${join(dir, 'nowhere.xml')}: cannot read the dictionary: no such file\n`]);
  });
});
