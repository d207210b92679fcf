/**
 * Paths below one record, as OData 4.01 URL Conventions address them (§4.6 a property, §4.7 its raw value,
 * §4.8 `$count` of a collection, §4.4 a navigation), in the shapes JSON Format 4.01 gives them (§7 a property's
 * value, §10 its context URL):
 * - `<Set>('<key>')/<Property>`: `{"@odata.context": "…#<Set>('<key>')/<Property>", "value": …}`; 204 when null;
 * - `…/<Property>/$value`: the raw value as text/plain; 204 when null; a collection has no raw value (400);
 * - `…/<Collection>/$count`: how many items it holds; `…/<Navigation>/$count`: how many related records the client
 *   may see;
 * - `<Set>('<key>')/<single-valued Navigation>`: the record it leads to, as `<Target>('<key>')` answers it ($select,
 *   $expand, ETag), or 204 when it leads to none the client may see.
 * A field hidden from the client answers as a name the set does not have (404 PropertyNotFound), whatever the
 * record; a record outside the client's licence as a missing one (404 RecordNotFound).
 *
 * Transactions (spec §8): a property, its raw value, a collection's `$count` and a single-valued navigation each
 * read one record by its key: class A, as a fetch by key. A navigation's `$count` counts the records of a query of
 * the related set: class B, as `<Set>/$count` and the navigation's own pages are.
 */
import { EntitySetSpec, expandable, FieldSpec, NavigationSpec } from '../../model/service-model';
import { Errors } from '../../errors/catalogue';
import { linkedKey, parentLinkOf, relatedTo } from '../../query/related-records';
import { entityTag, notModified } from '../caching';
import { isIeee754Sensitive, keySegment } from './entity-shape';
import { preferenceApplied } from './json-format';
import { parseKeyPredicate } from './key-predicate';
import type { RequestContext } from '../request-context';
import type { ResourceRequests } from './resource-handlers';
import { noContent, sendJson, sendText } from './response';

type Member =
  | { readonly kind: 'field'; readonly field: FieldSpec }
  | { readonly kind: 'navigation'; readonly navigation: NavigationSpec; readonly target: EntitySetSpec };

export class MemberRequests {
  constructor(private readonly requests: ResourceRequests, private readonly writeStallMs: number) {}

  /** `<Set>('<key>')/<name>`: a property's value, or the record a single-valued navigation leads to. */
  async member(ctx: RequestContext, set: EntitySetSpec, params: readonly string[]): Promise<void> {
    const key = parseKeyPredicate(set, params[0]);
    const member = this.memberOf(ctx, set, params[1]);
    if (member.kind === 'navigation') {
      if (member.navigation.collection) throw Errors.NavigationNotFollowable(set.name, member.navigation.name);
      await this.related(ctx, set, key, member.navigation, member.target);
      return;
    }
    const { field } = member;
    const value = await this.valueOf(ctx, set, key, field);
    if (value === null) {
      noContent(ctx.res);
      return;
    }
    const context = ctx.context(`${ctx.root}/$metadata#${set.name}${keySegment(key)}/${field.name}`);
    const body = JSON.stringify({
      ...(context !== undefined ? { '@odata.context': context } : {}),
      value: ctx.format.ieee754 && isIeee754Sensitive(field) ? asStrings(value) : value,
    });
    preferenceApplied(ctx);
    if (notModified(ctx.req, ctx.res, entityTag(body))) return;
    sendJson(ctx, body, this.writeStallMs);
  }

  /** `<Set>('<key>')/<Property>/$value`: the raw value, as text/plain. */
  async rawValue(ctx: RequestContext, set: EntitySetSpec, params: readonly string[]): Promise<void> {
    const key = parseKeyPredicate(set, params[0]);
    const member = this.memberOf(ctx, set, params[1]);
    if (member.kind === 'navigation') throw Errors.OptionNotApplicable('$value', `${member.navigation.name}, a navigation (only a property has a raw value)`);
    if (member.field.collection) throw Errors.OptionNotApplicable('$value', `${member.field.name}, a collection (only a single value has a raw value)`);
    const value = await this.valueOf(ctx, set, key, member.field);
    if (value === null) {
      noContent(ctx.res);
      return;
    }
    const text = String(value);
    if (notModified(ctx.req, ctx.res, entityTag(text))) return;
    sendText(ctx.res, text);
  }

  /** `<Set>('<key>')/<name>/$count`: the items of a collection property, or the related records of a navigation. */
  async count(ctx: RequestContext, set: EntitySetSpec, params: readonly string[]): Promise<void> {
    const key = parseKeyPredicate(set, params[0]);
    const member = this.memberOf(ctx, set, params[1]);
    if (member.kind === 'navigation') {
      const { navigation, target } = member;
      if (!navigation.collection) throw Errors.OptionNotApplicable('$count', `${navigation.name}, which leads to one record`);
      if (!navigation.followable) throw Errors.NavigationNotFollowable(set.name, navigation.name);
      await this.requests.requireRecord(ctx, set, key);
      await this.requests.count(ctx, target, relatedTo(navigation, target, key));
      return;
    }
    if (!member.field.collection) throw Errors.OptionNotApplicable('$count', `${member.field.name}, a single value`);
    const items = await this.valueOf(ctx, set, key, member.field);
    sendText(ctx.res, String(Array.isArray(items) ? items.length : 0));
  }

  /**
   * A name below a record: a field the client may see, or a navigation the service follows. Hidden and unknown
   * fields get the same answer, so a client cannot tell what is hidden from it.
   */
  private memberOf(ctx: RequestContext, set: EntitySetSpec, name: string): Member {
    const navigation = set.navigations.find((n) => n.name === name);
    if (navigation) {
      const target = this.requests.setNamed(navigation.target);
      if (!target || !expandable(navigation)) throw Errors.NavigationNotFollowable(set.name, name);
      return { kind: 'navigation', navigation, target };
    }
    const field = set.fieldsByName[name];
    if (!field || ctx.licence.hiddenIn(set).has(name)) {
      if (set.navigationProperties.some((p) => p.name === name)) throw Errors.NavigationNotFollowable(set.name, name);
      throw Errors.PropertyNotFound(set.name, name);
    }
    return { kind: 'field', field };
  }

  /** One field of one record the client may see (null, or [] for a collection, when it has no value); class A. */
  private async valueOf(ctx: RequestContext, set: EntitySetSpec, key: string | number, field: FieldSpec): Promise<unknown> {
    const q = this.requests.plans.of(ctx, set, 'entity').plan.query;
    if (q.select !== undefined) throw Errors.OptionNotApplicable('$select', `a property's value (${field.name})`);
    if (q.expand.length > 0) throw Errors.OptionNotApplicable('$expand', `a property's value (${field.name})`);
    const record = await this.requests.requireRecord(ctx, set, key, [field]);
    await this.requests.charge(ctx);
    return record[field.name] ?? null;
  }

  /**
   * The one record a single-valued navigation leads to: the target whose key the source holds in the join's field,
   * when the source's discriminator (if any) names the target's set or is empty, as its expansion reads it. None
   * when the client's licence hides either field: the record shown would tell their values.
   */
  private async related(ctx: RequestContext, set: EntitySetSpec, key: string | number, navigation: NavigationSpec, target: EntitySetSpec): Promise<void> {
    const link = parentLinkOf(navigation, set, ctx.licence.hiddenIn(set));
    const source = await this.requests.requireRecord(ctx, set, key, link ? [link.key, ...(link.owner ? [link.owner.field] : [])] : undefined);
    const targetKey = link && linkedKey(link, (f) => source[f.name]);
    if (targetKey === undefined) {
      await this.requests.charge(ctx);
      noContent(ctx.res);
      return;
    }
    await this.requests.entity(ctx, target, targetKey as string | number, true);
  }
}

/** Int64 and Decimal values as strings, for a client that asked for IEEE754Compatible. */
function asStrings(value: unknown): unknown {
  return Array.isArray(value) ? value.map(String) : String(value);
}
