/**
 * `GET /console/api/explorer` (any client): what the API explorer needs beside the client's own `$metadata`,
 * which does not state it: who the token belongs to, the transaction class of each kind of request and which
 * expansions are charged (so the explorer shows a query's cost before running it), which fields are restricted
 * (403 in $filter and $orderby), and where the lookup values are. All in the client's view: fields hidden from
 * it are not named.
 */
import { TRANSACTION_CLASSES } from '../../metering/meter';
import type { ServiceModel } from '../../model/service-model';
import type { Step } from '../pipeline';

/** After the bearer check (app.ts). */
export function explorerPolicy(model: ServiceModel): Step {
  const lookupSet = model.entitySets.find((s) => s.dictionaryRows?.kind === 'lookups');
  const lookupRows = lookupSet?.dictionaryRows?.kind === 'lookups' ? lookupSet.dictionaryRows.fields : undefined;
  return (ctx) => {
    const client = ctx.client!;
    const licence = ctx.licence;
    const sets = model.entitySets.map((set) => {
      const hidden = licence.hiddenIn(set);
      return {
        name: set.name,
        restricted: set.fields.filter((f) => f.restricted && !hidden.has(f.name)).map((f) => f.name),
        chargedNavigations: set.navigations.filter((n) => n.charged).map((n) => n.name),
      };
    });
    const res = ctx.res;
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(JSON.stringify({
      client: { id: client.id, name: client.name, admin: client.admin },
      transactions: TRANSACTION_CLASSES,
      sets,
      ...(lookupSet && lookupRows?.lookupName && lookupRows.value
        ? { lookups: { set: lookupSet.name, nameField: lookupRows.lookupName, valueField: lookupRows.value } }
        : {}),
    }));
  };
}
