/**
 * What one client is licensed to see: the listings its scope admits (within the operator's feed scope), and
 * every field but the ones hidden from it, also as records that name them (history, Field and Lookup rows,
 * query/named-fields.ts). A licence is bound once per client and reused: queries, counts,
 * key fetches, expansions, navigation paths and nextLink pages all read it, and the client's metadata view
 * leaves its hidden fields out.
 */
import { LRUCache } from 'lru-cache';
import { EntitySetSpec, listingRootOf, ServiceModel } from '../model/service-model';
import { MetadataViews } from '../metadata/render-metadata';
import { Visibility } from '../query/visibility';
import { Errors } from '../errors/catalogue';
import type { Client } from './clients';

const NONE: ReadonlySet<string> = new Set();
/** Licences kept bound (the least recently used goes first). */
const LICENCES_KEPT = 10_000;
/** The published documents of each model, shared by every licence that hides nothing. */
const PUBLISHED = new WeakMap<ServiceModel, MetadataViews>();

export class Licence {
  readonly visibility: Visibility;
  private readonly hidden = new Map<string, Set<string>>();
  private views?: MetadataViews;

  constructor(private readonly model: ServiceModel, feedScope: string | undefined, client?: Client) {
    const links = new Set(model.entitySets.flatMap((s) => s.navigations.flatMap((n) => (n.join ? [`${n.target}.${n.join.foreignKey}`] : []))));
    for (const entry of client?.hiddenFields ?? []) {
      // `Field` is a field of the listing root; `Set.Field` names another set's.
      const [setName, field] = entry.includes('.') ? entry.split('.', 2) : [listingRootOf(model)?.name, entry];
      const set = model.entitySets.find((s) => s.name === setName);
      if (!set?.fieldsByName[field]) throw Errors.HiddenFieldInvalid(entry, 'is not a field of the dictionary');
      if (field === set.key) throw Errors.HiddenFieldInvalid(entry, 'is the key of its set and cannot be hidden');
      if (links.has(`${set.name}.${field}`)) throw Errors.HiddenFieldInvalid(entry, `links ${set.name} to its listing and cannot be hidden`);
      (this.hidden.get(set.name) ?? this.hidden.set(set.name, new Set()).get(set.name)!).add(field);
    }
    // Each scope is bound on its own and all must hold: a client scope can only narrow the feed. Records
    // naming a hidden field are withheld the same way.
    this.visibility = new Visibility(model, [feedScope, client?.scope].filter((s): s is string => !!s), this.hidden);
  }

  hiddenIn(set: EntitySetSpec): ReadonlySet<string> {
    return this.hidden.get(set.name) ?? NONE;
  }

  /** The metadata documents without this client's hidden fields, each rendered once for this licence. */
  metadata(): MetadataViews {
    return (this.views ??= this.hidden.size === 0 ? publishedViews(this.model) : new MetadataViews(this.model, this.hidden));
  }
}

function publishedViews(model: ServiceModel): MetadataViews {
  let views = PUBLISHED.get(model);
  if (!views) PUBLISHED.set(model, (views = new MetadataViews(model, undefined, { xml: model.metadataXml, json: model.metadataJson })));
  return views;
}

/** What request handlers need: the licence of a request's client. */
export type LicenceSource = Pick<Licences, 'of'>;

/** Licences by client, bound once each (and again when the client's scope or hidden fields change). */
export class Licences {
  private readonly byClient = new LRUCache<string, Licence>({ max: LICENCES_KEPT });
  private readonly byRecord = new WeakMap<Client, Licence>();
  private readonly open: Licence;

  constructor(private readonly model: ServiceModel, private readonly feedScope: string | undefined) {
    this.open = new Licence(model, feedScope);
  }

  /**
   * A client's licence. A hidden field the dictionary no longer has is left out (a dictionary change removed it,
   * and with it every value: nothing is left to hide); `clients add` refuses such a name (client-admin.ts).
   */
  of(client: Client | undefined): Licence {
    if (!client) return this.open;
    // A client's record is immutable (a changed one is read anew, as another object): its licence, found once.
    const known = this.byRecord.get(client);
    if (known) return known;
    const key = `${client.id}\u0000${client.scope ?? ''}\u0000${client.hiddenFields.join(',')}`;
    let licence = this.byClient.get(key);
    if (!licence) {
      try {
        licence = new Licence(this.model, this.feedScope, { ...client, hiddenFields: client.hiddenFields.filter((e) => namesAField(this.model, e)) });
      } catch (e) {
        // `clients add` checks this; a client written some other way, or a dictionary changed since, can still fail.
        throw Errors.LicenceInvalid(client.id, (e as Error).message);
      }
      this.byClient.set(key, licence);
    }
    this.byRecord.set(client, licence);
    return licence;
  }
}

/** Whether a hidden-field entry (`Field`: the listing root's; `Set.Field`) names a field of the dictionary. */
export function namesAField(model: ServiceModel, entry: string): boolean {
  const [setName, field] = entry.includes('.') ? entry.split('.', 2) : [listingRootOf(model)?.name, entry];
  return !!model.entitySets.find((s) => s.name === setName)?.fieldsByName[field];
}

/** Why each client's licence cannot be applied under `model` (its requests are refused, 403 LicenceInvalid), by client. */
export function licenceProblems(model: ServiceModel, clients: readonly Client[]): string[] {
  const licences = new Licences(model, undefined);
  return clients.filter((c) => !c.revokedAt).flatMap((c) => {
    try {
      licences.of(c);
      return [];
    } catch (e) {
      return [`client ${c.id}: ${(e as Error).message}`];
    }
  });
}
