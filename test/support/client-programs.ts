/**
 * The small programs test/clients.test.ts writes beside each client's generated code, written as a consumer's
 * developer would use that client (its documented API, the server's URL and token from the environment). Each
 * prints one JSON line of what it read. They are text here because the code they import exists only once a
 * generator has run.
 */

/** SAP Cloud SDK: the typed client `generate-odata-client` wrote into ./gen/Reso. */
export const SAP_SDK_PROGRAM = `import { reso } from './gen/Reso';

async function main(): Promise<void> {
  const { propertyApi, mediaApi } = reso();
  const destination = { url: process.env.URL! };
  const auth = { Authorization: \`Bearer \${process.env.TOKEN}\` };
  const { LISTING_KEY, MLS_STATUS } = propertyApi.schema;
  // One read of 250, as an application asks for a screenful.
  const top = await propertyApi.requestBuilder().getAll().select(LISTING_KEY).top(250).addCustomHeaders(auth).execute(destination);
  // Server-driven paging: the SDK passes the nextLink's $skiptoken back as a custom query parameter.
  const keys: string[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const request = propertyApi.requestBuilder().getAll().select(LISTING_KEY).addCustomHeaders(auth);
    if (token) request.addCustomQueryParameters({ $skiptoken: token });
    const page = await request.executeRaw(destination);
    keys.push(...page.data.value.map((r: { ListingKey: string }) => r.ListingKey));
    const next: string | undefined = page.data['@odata.nextLink'];
    token = next ? new URL(next).searchParams.get('$skiptoken') : null;
    pages++;
  } while (token && pages < 1000);
  const count = await propertyApi.requestBuilder().getAll().count().addCustomHeaders(auth).execute(destination);
  const one = await propertyApi.requestBuilder().getByKey(top[0].listingKey).addCustomHeaders(auth).execute(destination);
  const active = await propertyApi.requestBuilder().getAll().select(LISTING_KEY, MLS_STATUS).filter(MLS_STATUS.equals('Active'))
    .top(5).addCustomHeaders(auth).execute(destination);
  const media = await mediaApi.requestBuilder().getAll().top(3).addCustomHeaders(auth).execute(destination);
  console.log(JSON.stringify({
    top: top.length, pages, walked: keys.length, distinct: new Set(keys).size, count: Number(count),
    key: top[0].listingKey, byKey: one.listingKey, active: active.map((a) => a.mlsStatus), media: media.length,
  }));
}

main().catch((e) => { console.error(e?.cause ?? e); process.exit(1); });
`;

/** odata2ts: the service odata2ts generated into ./gen, over its fetch client; collection properties and navigations as services. */
export const ODATA2TS_PROGRAM = `import { FetchClient } from '@odata2ts/http-client-fetch';
import { ResoService } from './gen/ResoService';

async function main(): Promise<void> {
  const client = new FetchClient({ headers: { Authorization: \`Bearer \${process.env.TOKEN}\` } });
  const service = new ResoService(client, process.env.URL!);
  const top = await service.Property().query((q) => q.select('ListingKey').top(250));
  let walked = 0;
  let pages = 0;
  let page: any = (await service.Property().query((q) => q.select('ListingKey'))).data;
  for (;;) {
    walked += page.value.length;
    pages++;
    if (!page['@odata.nextLink'] || pages > 1000) break;
    page = (await client.get(page['@odata.nextLink'])).data;
  }
  const key = top.data.value[0].ListingKey;
  const one = await service.Property(key).query((q) => q.select('ListingKey', 'City'));
  const appliances = await service.Property(key).Appliances().query();
  const media = await service.Property(key).Media().query((q) => q.select('MediaKey').top(1));
  const listing = await service.Media(media.data.value[0].MediaKey).Listing().query((q) => q.select('ListingKey'));
  console.log(JSON.stringify({
    top: top.data.value.length, walked, pages, key, byKey: one.data.ListingKey, appliances: Array.isArray(appliances.data.value),
    listing: listing.data.ListingKey,
  }));
}

main().catch((e) => { console.error(e?.cause ?? e); process.exit(1); });
`;

/** SAP CAP: a remote service over the model `cds import` wrote, queried with CQL as a CAP application does. */
export const CAP_PROGRAM = `const cds = require('@sap/cds');

(async () => {
  const srv = await cds.connect.to('Reso', {
    kind: 'odata', model: 'srv/external/Reso',
    credentials: { url: process.env.URL, headers: { Authorization: \`Bearer \${process.env.TOKEN}\` } },
  });
  const { Property, Media } = srv.entities;
  const rows = await srv.run(SELECT.from(Property).columns('ListingKey').limit(250));
  const one = await srv.run(SELECT.one.from(Property).where({ ListingKey: rows[0].ListingKey }));
  const active = await srv.run(SELECT.from(Property).columns('ListingKey', 'MlsStatus').where({ MlsStatus: 'Active' }).limit(5));
  const media = await srv.run(SELECT.from(Media).columns('MediaKey').limit(3));
  console.log(JSON.stringify({ rows: rows.length, key: rows[0].ListingKey, byKey: one && one.ListingKey, active: active.map((a) => a.MlsStatus), media: media.length }));
})().catch((e) => { console.error(e); process.exit(1); });
`;
