/**
 * The wire limit of a walk: the product's own pages of a whole walk, captured once, each one's nextLink pointing
 * at the next captured page (`/1`, `/2`, …), for plain node:http to serve as static bodies (static-body.ts) and
 * the same client (walk.ts) to walk. What the product's walk reaches is measured against this on the same cores.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NEXT_LINK_MEMBER } from './walk';

/** The pages of the walk from `first` (an absolute URL), written to `dir` as static-walk-<n>.json; their files, in order. */
export async function captureWalk(first: string, headers: Record<string, string>, dir: string): Promise<string[]> {
  const files: string[] = [];
  for (let url: URL | undefined = new URL(first); url;) {
    const res = await fetch(url, { headers });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`capturing the walk: GET ${url.pathname}${url.search.slice(0, 120)}: status ${res.status}`);
    const page = JSON.parse(body) as { '@odata.nextLink'?: string };
    const next = page['@odata.nextLink'];
    const at = body.lastIndexOf(NEXT_LINK_MEMBER);
    // The nextLink is the body's last member (walk.ts reads it from there); only it changes.
    if (next !== undefined && body.slice(at + NEXT_LINK_MEMBER.length) !== `${JSON.stringify(next)}}`) throw new Error('capturing the walk: the nextLink is not the page\'s last member');
    const file = join(dir, `static-walk-${files.length}.json`);
    writeFileSync(file, next === undefined ? body : `${body.slice(0, at)}${NEXT_LINK_MEMBER}${JSON.stringify(`/${files.length + 1}`)}}`);
    files.push(file);
    url = next === undefined ? undefined : new URL(next, url);
  }
  return files;
}
