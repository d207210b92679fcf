/**
 * The policy `reso-server init` adds to an operator's dictionary where it states none (docs/dictionary.md "Starting from your
 * own dictionary"): each default keyed by RESO's standard names (a set of RESO's Property type, a field named
 * MlsStatus), applied only where that set or field exists with the type the policy needs, and never where the
 * dictionary already has the annotation, whatever it says. What is decided here is what the spec asks of a
 * listing service: a listing root whose deleted listings are marked, the spec's §4 query fields, the change
 * timestamps the service keeps, the charged expansions, and RESO's EntityEvent, Lookup and Field resources.
 */
import { FieldSpec, ownedNavigations } from '../src/model/service-model';
import { RESO_ENTITY_EVENT as EVENT } from './build-change-log';
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';
import { POLICY_ALIAS, POLICY_NAMESPACE, POLICY_SCHEMA } from './policy-vocabulary';
import type { Insertion } from './text-insertion';
import { childrenNamed, XmlElement, XmlOutline } from './xml-outline';

export interface AppliedDefault extends Insertion {
  /** What was added, where: `Property: Policy.ListingRoot`. */
  readonly what: string;
  readonly why: string;
}

export interface DefaultsPlan {
  readonly applied: readonly AppliedDefault[];
  /** Defaults that did not apply, and why (a field missing, or of another type). */
  readonly notApplied: readonly string[];
}

const CORE = { namespace: 'Org.OData.Core.V1', alias: 'Core' };
const CAPABILITIES = { namespace: 'Org.OData.Capabilities.V1', alias: 'Capabilities' };
const VOCABULARY_URI = (namespace: string) => `https://oasis-tcs.github.io/odata-vocabularies/vocabularies/${namespace}.xml`;

/** The spec's §4 Property query fields: filterable and sortable on the listing root where they exist. */
const LISTING_QUERY_FIELDS = ['ListingKey', 'ModificationTimestamp', 'PhotosChangeTimestamp', 'DocumentsChangeTimestamp', 'MlsStatus', 'PropertyType'];
/** Timestamps a filter orders by (spec §4 sorting rules 2 and 3), each moved by the listing's media of a category. */
const MEDIA_TIMESTAMPS = [{ field: 'PhotosChangeTimestamp', category: 'Photo' }, { field: 'DocumentsChangeTimestamp', category: 'Document' }];
/** Expansions charged one more class B transaction each (spec §4 expansion rule 2), by the related resource's type. */
const CHARGED_TYPES = ['Media', 'OpenHouse', 'HistoryTransactional'];
/** Longest string an index may cover (build-model.ts). */
const MAX_INDEXED_STRING = 510;
/** RESO's Lookup resource, read by lookup name (`Lookup?$filter=LookupName eq 'StandardStatus'`: RESO's own clients and reso-cert). */
const LOOKUP = { type: 'Lookup', key: 'LookupKey', name: 'LookupName' };

const attr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** Decides the defaults for a dictionary (its text's outline, and the model it gives as it is). */
export function planDefaults(outline: XmlOutline, model: BuiltModel): DefaultsPlan {
  return new Planner(outline, model).plan();
}

class Planner {
  private readonly applied: AppliedDefault[] = [];
  private readonly notApplied: string[] = [];
  private readonly aliases = new Map<string, string>();
  private readonly root: XmlElement;
  private readonly services: XmlElement;
  private readonly all: XmlElement[] = [];
  private policy: string;

  constructor(private readonly outline: XmlOutline, private readonly model: BuiltModel) {
    this.root = outline.roots[0];
    this.services = childrenNamed(this.root, 'DataServices')[0];
    const visit = (e: XmlElement) => { this.all.push(e); e.children.forEach(visit); };
    visit(this.root);
    for (const e of this.all.filter((x) => (x.local === 'Include' || x.local === 'Schema') && x.attributes.get('Alias'))) {
      this.aliases.set(e.attributes.get('Alias')!, e.attributes.get('Namespace')!);
    }
    const declared = this.all.find((e) => e.local === 'Schema' && e.attributes.get('Namespace') === POLICY_NAMESPACE);
    this.policy = declared ? declared.attributes.get('Alias') ?? POLICY_NAMESPACE : this.freeAlias(POLICY_ALIAS, POLICY_NAMESPACE);
  }

  plan(): DefaultsPlan {
    const vocabulary = this.policyVocabulary();
    const root = this.listingRoot();
    const log = this.changeLog(root);
    const lookup = this.lookupSet();
    for (const set of this.model.entitySets) this.wanted.set(set.name, wantedOf(set, { root, log: log?.set, lookup }));
    if (root) this.listingPolicy(root);
    if (log) this.applied.push(log.addition);
    this.dictionarySets();
    for (const set of this.model.entitySets) this.restrictions(set, set === root ? 'root' : set === log?.set ? 'log' : set === lookup ? 'lookup' : 'other');
    const capabilities = this.applied.some((a) => a.elements.some((e) => e.includes('Term="@CAPABILITIES@.')));
    const qualifier = capabilities ? this.vocabularyQualifier(CAPABILITIES, 'the Capabilities annotations added') : '';
    const applied = this.applied.map((a) => ({ ...a, elements: a.elements.map((e) => e.split('@CAPABILITIES@').join(qualifier)) }));
    return { applied: [...vocabulary, ...this.references, ...applied], notApplied: this.notApplied };
  }

  // ---- the vocabularies the annotations use

  private readonly references: AppliedDefault[] = [];

  private policyVocabulary(): AppliedDefault[] {
    if (this.all.some((e) => e.local === 'Schema' && e.attributes.get('Namespace') === POLICY_NAMESPACE)) return [];
    if (!this.aliases.has(CORE.alias) && ![...this.aliases.values()].includes(CORE.namespace)) this.reference(CORE, 'the Policy terms\' type Core.Tag');
    const schema = this.policy === POLICY_ALIAS ? POLICY_SCHEMA : POLICY_SCHEMA.map((l, i) => (i === 0 ? l.replace(` Alias="${POLICY_ALIAS}"`, '') : l));
    const first = childrenNamed(this.services, 'Schema')[0];
    return [{
      into: this.services, before: first, elements: [schema.join('\n')],
      what: `the ${POLICY_NAMESPACE} schema${this.policy === POLICY_ALIAS ? ` (alias ${POLICY_ALIAS})` : ''}`,
      why: 'declares the terms of the annotations below, each with what it does',
    }];
  }

  /** The qualifier annotations use for a vocabulary: its alias, declaring a reference to it when there is none. */
  private vocabularyQualifier(vocabulary: { namespace: string; alias: string }, why: string): string {
    const alias = [...this.aliases].find(([, ns]) => ns === vocabulary.namespace)?.[0];
    if (alias) return alias;
    if (![...this.aliases.values()].includes(vocabulary.namespace)) return this.reference(vocabulary, why);
    return vocabulary.namespace;
  }

  private reference(vocabulary: { namespace: string; alias: string }, why: string): string {
    const alias = this.freeAlias(vocabulary.alias, vocabulary.namespace);
    const prefix = this.root.name.includes(':') ? this.root.name.slice(0, this.root.name.indexOf(':') + 1) : '';
    const aliasAttr = alias === vocabulary.alias ? ` Alias="${alias}"` : '';
    this.references.push({
      into: this.root, before: this.services,
      elements: [`<${prefix}Reference Uri="${VOCABULARY_URI(vocabulary.namespace)}">\n  <${prefix}Include Namespace="${vocabulary.namespace}"${aliasAttr}/>\n</${prefix}Reference>`],
      what: `a reference to ${vocabulary.namespace}${aliasAttr ? ` (alias ${alias})` : ''}`,
      why: `for ${why}`,
    });
    if (aliasAttr) this.aliases.set(alias, vocabulary.namespace);
    return alias;
  }

  /** `wanted` unless the document already uses it as an alias of another namespace; then the namespace itself. */
  private freeAlias(wanted: string, namespace: string): string {
    const taken = this.aliases.get(wanted);
    return taken === undefined || taken === namespace ? wanted : namespace;
  }

  // ---- finding elements and their annotations

  private term(name: string): string {
    const dot = name.lastIndexOf('.');
    const qualifier = name.slice(0, dot);
    return `${this.aliases.get(qualifier) ?? qualifier}.${name.slice(dot + 1)}`;
  }

  private stated(element: XmlElement | undefined, namespace: string, term: string): boolean {
    return !!element?.children.some((c) => c.local === 'Annotation' && this.term(c.attributes.get('Term')!) === `${namespace}.${term}`);
  }

  private statedPolicy(element: XmlElement | undefined, term: string): boolean {
    return this.stated(element, POLICY_NAMESPACE, term);
  }

  private setElement(set: BuiltEntitySet): XmlElement {
    return this.all.find((e) => e.local === 'EntitySet' && e.attributes.get('Name') === set.name)!;
  }

  private memberElement(set: BuiltEntitySet, kind: 'Property' | 'NavigationProperty', name: string): XmlElement {
    const type = this.all.find((e) => e.local === 'EntityType' && e.attributes.get('Name') === set.typeDef.name)!;
    return type.children.find((e) => e.local === kind && e.attributes.get('Name') === name)!;
  }

  private add(into: XmlElement, annotation: string, what: string, why: string): void {
    this.applied.push({ into, elements: [annotation], what, why });
  }

  private tag(term: string, value?: string): string {
    return `<Annotation Term="${this.policy}.${term}"${value === undefined ? '' : ` String="${attr(value)}"`}/>`;
  }

  private typeOfSet(name: string): string | undefined {
    return this.model.entitySets.find((s) => s.name === name)?.typeDef.name;
  }

  // ---- the listing root

  private listingRoot(): BuiltEntitySet | undefined {
    const stated = this.model.entitySets.filter((s) => this.statedPolicy(this.setElement(s), 'ListingRoot'));
    if (stated.length) return this.model.entitySets.find((s) => s.listingRoot);
    const properties = this.model.entitySets.filter((s) => s.typeDef.name === 'Property');
    const set = properties.find((s) => s.name === 'Property') ?? (properties.length === 1 ? properties[0] : undefined);
    if (!set) {
      this.notApplied.push('ListingRoot: no entity set of RESO\'s Property type (or several, none named Property): no set is the listing root, so client and feed scopes apply to none');
      return undefined;
    }
    if (!set.changeTimestamp) {
      this.notApplied.push(`${set.name}: ListingRoot not added: its type has no Edm.DateTimeOffset ModificationTimestamp, which the listing root needs`);
      return undefined;
    }
    this.add(this.setElement(set), this.tag('ListingRoot'), `${set.name}: ${this.policy}.ListingRoot`,
      'RESO\'s Property resource: the listings that client and feed scopes select; its related records are scoped through it (spec §2)');
    return set;
  }

  private listingPolicy(root: BuiltEntitySet): void {
    const field = (name: string) => root.fields.find((f) => f.name === name);
    const status = field('MlsStatus');
    if (!this.statedPolicy(this.setElement(root), 'DeletedWhen')) {
      if (status?.type === 'Edm.String' && !status.collection && !this.admits(status, 'Delete')) {
        this.notApplied.push(`${root.name}: DeletedWhen not added: the lookup ${status.lookupName} of MlsStatus has no value Delete`);
      } else if (status?.type === 'Edm.String' && !status.collection) {
        this.add(this.setElement(root), this.tag('DeletedWhen', "MlsStatus eq 'Delete'"), `${root.name}: ${this.policy}.DeletedWhen "MlsStatus eq 'Delete'"`,
          'spec §3: a listing is never deleted; it is set to the status Delete, which a replicating client removes');
      } else this.notApplied.push(`${root.name}: DeletedWhen not added: no single Edm.String MlsStatus`);
    }
    this.movedByRelated(root);
    for (const { field: name } of MEDIA_TIMESTAMPS) {
      const f = field(name);
      if (!f || !isTimestamp(f) || this.statedPolicy(this.memberElement(root, 'Property', name), 'OrdersWhenFiltered')) continue;
      if (!this.finalFilterable(root, name) || !this.finalSortable(root, name)) {
        this.notApplied.push(`${root.name}.${name}: OrdersWhenFiltered not added: the dictionary's restrictions make it not filterable or not sortable`);
        continue;
      }
      this.add(this.memberElement(root, 'Property', name), this.tag('OrdersWhenFiltered'), `${root.name}.${name}: ${this.policy}.OrdersWhenFiltered`,
        'spec §4 sorting rules 2 and 3: a filter on it sorts by it');
    }
    for (const nav of root.navigations.filter((n) => n.followable && CHARGED_TYPES.includes(this.typeOfSet(n.target)!))) {
      const element = this.memberElement(root, 'NavigationProperty', nav.name);
      if (this.statedPolicy(element, 'ChargedExpansion')) continue;
      this.add(element, this.tag('ChargedExpansion'), `${root.name}.${nav.name}: ${this.policy}.ChargedExpansion`,
        'spec §4 expansion rule 2: expanding it costs one more class B transaction');
    }
  }

  /** The change timestamp moved by every related record; the photo and document timestamps by the media of their category. */
  private movedByRelated(root: BuiltEntitySet): void {
    const children = root.navigations.filter((n) => n.followable);
    const moves = [{ field: root.changeTimestamp!, entries: children.map((n) => n.name), why: 'spec §2: updated whenever the listing changes, including when its media change' }];
    for (const { field, category } of MEDIA_TIMESTAMPS) {
      const media = children.filter((n) => this.typeOfSet(n.target) === 'Media'
        && this.model.entitySets.find((s) => s.name === n.target)!.fields.some((f) => f.name === 'MediaCategory' && f.type === 'Edm.String' && !f.collection
          && this.admits(f, category)));
      const f = root.fields.find((x) => x.name === field);
      if (!f || !isTimestamp(f)) continue;
      if (media.length === 0) {
        this.notApplied.push(`${root.name}.${field}: MovedByRelated not added: no followable navigation to Media with a MediaCategory that can be ${category}`);
        continue;
      }
      moves.push({ field, entries: media.map((n) => `${n.name}/MediaCategory eq '${category}'`), why: `the time of the last ${category.toLowerCase()} change: moved by each media record of category ${category}` });
    }
    for (const move of moves.filter((m) => m.entries.length > 0)) {
      const element = this.memberElement(root, 'Property', move.field);
      if (this.statedPolicy(element, 'MovedByRelated')) continue;
      this.add(element, this.tag('MovedByRelated', move.entries.join(',')), `${root.name}.${move.field}: ${this.policy}.MovedByRelated "${move.entries.join(',')}"`,
        `${move.why}; kept by the service (ingest ignores the value given)`);
    }
  }

  /** Whether `field` can hold `value`: any value where its lookup is open (values as data) or it has none. */
  private admits(field: FieldSpec, value: string): boolean {
    const values = this.model.lookups.find((l) => l.name === field.lookupName)?.values;
    return !values?.length || values.some((v) => v.value === value);
  }

  // ---- filterable and sortable

  private readonly wanted = new Map<string, { filter: string[]; sort: string[] }>();

  private restrictions(set: BuiltEntitySet, role: 'root' | 'log' | 'lookup' | 'other'): void {
    const { filter, sort } = this.wanted.get(set.name)!;
    const element = this.setElement(set);
    const why = role === 'root' ? 'the key, the change timestamp and the spec\'s §4 query fields; every other field answers 501'
      : role === 'log' ? 'the event sequence, and the resource and key an event names (RCP-027); every other field answers 501'
        : role === 'lookup' ? 'the key, the change timestamp, and the lookup name RESO\'s clients read a lookup\'s values by; every other field answers 501'
          : 'the key and the change timestamp, which paging and replication use; every other field answers 501 (each filterable field costs an index)';
    for (const [term, list, kind, fields] of [['FilterRestrictions', 'NonFilterableProperties', 'filter', filter], ['SortRestrictions', 'NonSortableProperties', 'order', sort]] as const) {
      if (this.stated(element, CAPABILITIES.namespace, term)) continue;
      const non = set.typeDef.properties.map((p) => p.name).filter((n) => !fields.includes(n));
      this.add(element, restriction(term, list, non), `${set.name}: Capabilities.${term} (${kind} by ${fields.join(', ')})`, why);
    }
  }

  private finalFilterable(set: BuiltEntitySet, name: string): boolean {
    if (this.stated(this.setElement(set), CAPABILITIES.namespace, 'FilterRestrictions')) return !!set.fields.find((f) => f.name === name)?.filterable;
    return this.wanted.get(set.name)!.filter.includes(name) && !set.fields.find((f) => f.name === name)?.restricted;
  }

  private finalSortable(set: BuiltEntitySet, name: string): boolean {
    if (this.stated(this.setElement(set), CAPABILITIES.namespace, 'SortRestrictions')) return !!set.fields.find((f) => f.name === name)?.sortable;
    return this.wanted.get(set.name)!.sort.includes(name) && !set.fields.find((f) => f.name === name)?.restricted;
  }

  // ---- RESO's EntityEvent, Lookup and Field resources

  /** RESO's EntityEvent set as the change log, when it has what one needs: the set, and its annotation to add. */
  private changeLog(root: BuiltEntitySet | undefined): { set: BuiltEntitySet; addition: AppliedDefault } | undefined {
    if (this.model.entitySets.some((s) => this.statedPolicy(this.setElement(s), 'ChangeLogOf'))) return undefined;
    const logs = this.model.entitySets.filter((s) => s.typeDef.name === EVENT.type);
    if (logs.length !== 1) return undefined;
    const log = logs[0];
    const field = (name: string) => log.fields.find((f) => f.name === name);
    const filtersStated = this.stated(this.setElement(log), CAPABILITIES.namespace, 'FilterRestrictions');
    const eventField = (name: string) => {
      const f = field(name);
      return f?.type === 'Edm.String' && !f.collection && (f.maxLength ?? 255) <= MAX_INDEXED_STRING && (!filtersStated || f.filterable);
    };
    const url = field(EVENT.recordUrl);
    if (field(log.key)?.type !== EVENT.key || !eventField(EVENT.resourceName) || !eventField(EVENT.recordKey) || (filtersStated && url?.column)) {
      this.notApplied.push(`${log.name}: ChangeLogOf not added: RESO's EntityEvent needs an Edm.Int64 key and filterable single Edm.String ${EVENT.resourceName} and ${EVENT.recordKey}, `
        + `and ${EVENT.recordUrl} not filterable or sortable`);
      return undefined;
    }
    const logged = this.model.entitySets.filter((s) => s !== log && s.fields.find((f) => f.name === s.key)?.type === 'Edm.String'
      // A set the listing names by a single-valued navigation (its agent's Member) is no listing's: logged as any other.
      && !(root && s !== root && ownedNavigations(root).some((n) => n.target === s.name && n.join.referencedKey !== root.key)));
    const left = this.model.entitySets.filter((s) => s !== log && !logged.includes(s)).map((s) => s.name);
    if (left.length) this.notApplied.push(`${log.name}: ChangeLogOf leaves out ${left.join(', ')} (a key that is not Edm.String, or joined to the listing on another field than its key)`);
    return {
      set: log,
      addition: {
        into: this.setElement(log), elements: [this.tag('ChangeLogOf', logged.map((s) => s.name).join(','))], what: `${log.name}: ${this.policy}.ChangeLogOf (${logged.length} sets)`,
        why: 'RESO EntityEvent (RCP-027): one event per committed change of a record of every other set, for replication by EntityEventSequence',
      },
    };
  }

  private lookupSet(): BuiltEntitySet | undefined {
    return this.model.entitySets.find((s) => s.typeDef.name === LOOKUP.type && s.key === LOOKUP.key);
  }

  private dictionarySets(): void {
    const lookup = this.lookupSet();
    const field = this.model.entitySets.find((s) => s.typeDef.name === 'Field' && s.key === 'FieldKey');
    const describing = (kind: string) => this.model.entitySets.some((s) => s.dictionaryRows?.kind === kind);
    if (lookup) {
      const element = this.setElement(lookup);
      const used = new Set(this.model.entitySets.flatMap((s) => s.fields.map((f) => f.lookupName).filter((n): n is string => !!n)));
      const inDictionary = new Set(this.model.lookups.filter((l) => l.values.length > 0).map((l) => l.name));
      const open = [...used].filter((n) => !inDictionary.has(n));
      if (!this.statedPolicy(element, 'DescribesDictionary') && !describing('lookups')) {
        if (used.size > 0 && open.length === 0) {
          this.add(element, this.tag('DescribesDictionary', 'Lookups'), `${lookup.name}: ${this.policy}.DescribesDictionary "Lookups"`,
            'its rows are the values of the dictionary\'s lookups (its EnumTypes), kept equal to it by the service');
        } else {
          // Kept equal to the dictionary, the set would lose every row of a lookup whose values the MLS sets.
          this.notApplied.push(`${lookup.name}: DescribesDictionary not added: the dictionary does not hold the values of ${open.length} of the `
            + `${used.size} lookups its fields name (${open.slice(0, 3).join(', ')}${open.length > 3 ? ', …' : ''}), so the Lookup rows are your data: ingest them`);
        }
      }
      if (!this.statedPolicy(element, 'PagedByTop')) {
        this.add(element, this.tag('PagedByTop'), `${lookup.name}: ${this.policy}.PagedByTop`, 'RESO\'s Lookup reader takes $top as a page size and follows nextLinks to the end');
      }
    }
    if (field && !this.statedPolicy(this.setElement(field), 'DescribesDictionary') && !describing('fields')) {
      this.add(this.setElement(field), this.tag('DescribesDictionary', 'Fields'), `${field.name}: ${this.policy}.DescribesDictionary "Fields"`,
        'its rows are the dictionary\'s fields, kept equal to it by the service');
    }
  }
}

/** The sets with a part of their own in the spec or in RESO's resources. */
interface Roles {
  readonly root?: BuiltEntitySet;
  readonly log?: BuiltEntitySet;
  readonly lookup?: BuiltEntitySet;
}

/** What a set filters and orders on by default: its key and change timestamp, and what its role asks. */
function wantedOf(set: BuiltEntitySet, roles: Roles): { filter: string[]; sort: string[] } {
  const own = [set.key, ...(set.changeTimestamp ? [set.changeTimestamp] : [])];
  const listing = set === roles.root ? LISTING_QUERY_FIELDS.filter((n) => queryable(set.fields.find((f) => f.name === n))) : [];
  const events = set === roles.log ? [EVENT.resourceName, EVENT.recordKey] : [];
  const lookups = set === roles.lookup && queryable(set.fields.find((f) => f.name === LOOKUP.name)) ? [LOOKUP.name] : [];
  return { filter: [...new Set([...own, ...listing, ...events, ...lookups])], sort: [...new Set([...own, ...listing, ...lookups])] };
}

const isTimestamp = (f: FieldSpec) => f.type === 'Edm.DateTimeOffset' && !f.collection;

/** A field the listing's queries may name: a single value an index can hold, not restricted. */
function queryable(f: FieldSpec | undefined): boolean {
  return !!f && !f.collection && !f.restricted && (f.type !== 'Edm.String' || (f.maxLength ?? 255) <= MAX_INDEXED_STRING);
}

function restriction(term: string, list: string, fields: readonly string[]): string {
  const collection = fields.length === 0 ? '      <Collection/>'
    : ['      <Collection>', ...fields.map((f) => `        <PropertyPath>${f}</PropertyPath>`), '      </Collection>'].join('\n');
  return [`<Annotation Term="@CAPABILITIES@.${term}">`, '  <Record>', `    <PropertyValue Property="${list}">`, collection, '    </PropertyValue>', '  </Record>', '</Annotation>'].join('\n');
}
