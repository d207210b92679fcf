/**
 * What one client is licensed to see: the listings its scope admits (within the operator's feed scope), and
 * every field but the ones hidden from it. A licence is bound once per client and reused: queries, counts,
 * key fetches, expansions, navigation paths and nextLink pages all read it, and the client's metadata view
 * leaves its hidden fields out.
 */
import { LRUCache } from 'lru-cache';
import type { EntitySetSpec, ServiceModel } from '../model/service-model';
import { Visibility } from '../query/visibility';
import type { Dialect } from '../storage/database';
import { ODataError } from '../http/odata-error';
import type { Client } from './clients';

const NONE: ReadonlySet<string> = new Set();
/** Licences kept bound (the least recently used goes first). */
const LICENCES_KEPT = 10_000;

export class Licence {
  readonly visibility: Visibility;
  private readonly hidden = new Map<string, Set<string>>();
  private views?: { xml: string; json: string };

  constructor(private readonly model: ServiceModel, dialect: Dialect, feedScope: string | undefined, client?: Client) {
    // Each scope is bound on its own and the conditions are joined in SQL: a client scope can only narrow the feed.
    this.visibility = new Visibility(model, dialect, [feedScope, client?.scope].filter((s): s is string => !!s));
    const links = new Set(model.entitySets.flatMap((s) => s.navigations.flatMap((n) => (n.join ? [`${n.target}.${n.join.foreignKey}`] : []))));
    for (const entry of client?.hiddenFields ?? []) {
      // `Field` is a Property field; `Set.Field` names another set's.
      const [setName, field] = entry.includes('.') ? entry.split('.', 2) : ['Property', entry];
      const set = model.entitySets.find((s) => s.name === setName);
      if (!set?.fieldsByName[field]) throw new Error(`hidden field ${entry} is not a field of the dictionary`);
      if (field === set.key) throw new Error(`the key ${entry} cannot be hidden`);
      if (links.has(`${set.name}.${field}`)) throw new Error(`${set.name}.${field} links ${set.name} to its listing and cannot be hidden`);
      (this.hidden.get(set.name) ?? this.hidden.set(set.name, new Set()).get(set.name)!).add(field);
    }
  }

  hiddenIn(set: EntitySetSpec): ReadonlySet<string> {
    return this.hidden.get(set.name) ?? NONE;
  }

  /** The metadata documents without this client's hidden fields. */
  metadata(): { xml: string; json: string } {
    if (this.hidden.size === 0) return { xml: this.model.metadataXml, json: this.model.metadataJson };
    this.views ??= { xml: this.filterXml(), json: this.filterJson() };
    return this.views;
  }

  private filterJson(): string {
    const doc = JSON.parse(this.model.metadataJson) as Record<string, any>;
    const schema = doc[this.model.namespace];
    const container = schema[this.model.containerName];
    for (const [setName, fields] of this.hidden) {
      const set = this.model.entitySets.find((s) => s.name === setName)!;
      const typeName = set.entityType.slice(this.model.namespace.length + 1);
      for (const f of fields) delete schema[typeName][f];
      for (const term of ['@Capabilities.FilterRestrictions', '@Capabilities.SortRestrictions']) {
        const r = container[setName][term];
        for (const k of Object.keys(r)) r[k] = (r[k] as string[]).filter((f) => !fields.has(f));
      }
    }
    return `${JSON.stringify(doc, null, 2)}\n`;
  }

  /** The generated XML has one element per line, so a hidden field is its own lines in its type and set. */
  private filterXml(): string {
    const lines = this.model.metadataXml.split('\n');
    const out: string[] = [];
    let type: string | undefined;
    let set: string | undefined;
    let skipping = false;
    for (const line of lines) {
      const t = /<EntityType Name="([^"]+)"/.exec(line);
      if (t) type = t[1];
      if (/<\/EntityType>/.test(line)) type = undefined;
      const s = /<EntitySet Name="([^"]+)"/.exec(line);
      if (s) set = s[1];
      if (/<\/EntitySet>/.test(line)) set = undefined;
      if (skipping) {
        if (/<\/Property>/.test(line)) skipping = false;
        continue;
      }
      const p = /^\s*<Property Name="([^"]+)"/.exec(line);
      const typeSet = type && this.model.entitySets.find((x) => x.entityType.endsWith(`.${type}`));
      if (p && typeSet && this.hidden.get(typeSet.name)?.has(p[1])) {
        skipping = !line.trimEnd().endsWith('/>');
        continue;
      }
      const path = /^\s*<PropertyPath>([^<]+)<\/PropertyPath>/.exec(line);
      if (path && set && this.hidden.get(set)?.has(path[1])) continue;
      out.push(line);
    }
    return out.join('\n');
  }
}

/** What request handlers need: the licence of a request's client. */
export type LicenceSource = Pick<Licences, 'of'>;

/** Licences by client, bound once each (and again when the client's scope or hidden fields change). */
export class Licences {
  private readonly byClient = new LRUCache<string, Licence>({ max: LICENCES_KEPT });
  private readonly open: Licence;

  constructor(private readonly model: ServiceModel, private readonly dialect: Dialect, private readonly feedScope: string | undefined) {
    this.open = new Licence(model, dialect, feedScope);
  }

  of(client: Client | undefined): Licence {
    if (!client) return this.open;
    const key = `${client.id}\u0000${client.scope ?? ''}\u0000${client.hiddenFields.join(',')}`;
    let licence = this.byClient.get(key);
    if (!licence) {
      try {
        licence = new Licence(this.model, this.dialect, this.feedScope, client);
      } catch (e) {
        // `clients add` checks this; a client written some other way, or a dictionary changed since, can still fail.
        throw new ODataError(403, 'Forbidden', `the licence of client ${client.id} cannot be applied (${(e as Error).message}); the operator must correct it`);
      }
      this.byClient.set(key, licence);
    }
    return licence;
  }
}
