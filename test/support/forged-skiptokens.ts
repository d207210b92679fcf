/**
 * $skiptokens as a holder of PAGING_SECRET could make them: sealed exactly as the service seals its own
 * (src/paging/skiptoken.ts), around positions of every wrong shape. The service must refuse each with
 * SkipTokenInvalid (400), never fail on it.
 */
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { queryDigest } from '../../src/paging/skiptoken';
import type { Rng } from './query-fuzz-gen';

/** A $skiptoken sealed as the service seals them, around any body text. */
export function sealToken(secret: string, digest: string, body: string): string {
  const key = createHmac('sha256', Buffer.from(secret, 'utf8')).update('reso-server $skiptoken v2').digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(digest));
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/**
 * The digest the service binds a token to for the test servers' `demo` client (the owner of TEST_TOKEN): the
 * path and the system options as written, by bare name (`filter`, `orderby`, …), without `skiptoken`/`format`.
 */
export function digestOf(path: string, options: Readonly<Record<string, string>>): string {
  return queryDigest(`demo ${path}`, options);
}

/** Sort values of every kind a forged position may hold, right and wrong. */
const POSITION_VALUES: readonly string[] = [
  '"2026-01-01T00:00:00.000Z"', '"2026-01-01T00:00:00Z"', '"2026-13-45T99:99:99.999Z"', '"2026-02-30T00:00:00.000Z"', '"0000-01-01T00:00:00.000Z"',
  '"L000001"', '"L000050"', '""', '"Active"', '"x"', '"\\u0000"', '"😀"', `"${'x'.repeat(5000)}"`, '"2026-01-01"',
  '0', '1', '-1', '1.5', '1e308', '-1e308', '1e999', '-1e999', '18446744073709551616', '9007199254740993', '-0', '0.1e-400',
  'true', 'false', 'null', '{}', '{"a":1}', '[]', '[1,2]', '[[["deep"]]]', '{"v":2}', '"NaN"', '"Infinity"',
];

/**
 * The plain text of a forged `$skiptoken` body (sealed by the caller with the known secret): mostly the service's
 * shape `{"v":2,"l":[…],"n":…}` with values of the wrong kinds, counts or lengths, sometimes other JSON or no JSON.
 */
export function forgedPosition(r: Rng): string {
  const values = (n: number) => Array.from({ length: n }, () => r.pick(POSITION_VALUES)).join(',');
  const count = () => r.pick(['0', '1', '17', '-1', '1.5', '1e308', '"3"', 'null', '[]', '9007199254740993', '1e999']);
  switch (r.int(0, 9)) {
    case 0: return r.pick(['', 'null', '[]', '"l"', '42', 'true', '{', 'NaN', '{"v":2,"l":[NaN],"n":0}', '{"v":2,"l":[Infinity],"n":0}',
      `${'['.repeat(20_000)}${']'.repeat(20_000)}`, '{"__proto__":{"l":[1]},"v":2,"n":0}', '\uFEFF{"v":2,"l":[],"n":0}']);
    case 1: return `{"v":${r.pick(['1', '3', '"2"', 'null', '2.0'])},"l":[${values(2)}],"n":${count()}}`;
    case 2: return `{"v":2,"l":${r.pick(['null', '{}', '"x"', '1', `{"0":${r.pick(POSITION_VALUES)}}`])},"n":0}`;
    case 3: return `{"v":2,"l":[${values(r.pick([0, 1, 3, 4, 50]))}],"n":${count()}}`;
    case 4: return `{"v":2,"l":[${values(2)}]}`;
    case 5: return `{"v":2,"l":[${r.pick(POSITION_VALUES)},"L000001"],"n":${count()}}`;
    case 6: return `{"v":2,"l":["2026-01-01T00:00:00.000Z",${r.pick(POSITION_VALUES)}],"n":${count()}}`;
    case 7: return `{"v":2,"l":[null,${r.pick(POSITION_VALUES)}],"n":0,"extra":${r.pick(POSITION_VALUES)}}`;
    default: return `{"v":2,"l":[${values(2)}],"n":${count()}}`;
  }
}
