/**
 * The manual stays navigable and true to the tree: every relative link in README.md and docs/**\/*.md leads to a
 * file that exists (and, into a Markdown page, to a heading it has), and docs/architecture.md names only repository
 * paths that exist and draws every folder of src/. A file moved or renamed without its documentation fails here,
 * naming the page and the path.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from './support/shared';

const shown = (file: string) => relative(REPO_ROOT, file).split(sep).join('/');

/** The Markdown pages of the manual: the README and everything under docs/. */
function pages(): string[] {
  const under = (dir: string): string[] => readdirSync(dir).flatMap((n) => {
    const path = join(dir, n);
    return statSync(path).isDirectory() ? under(path) : path.endsWith('.md') ? [path] : [];
  });
  return [join(REPO_ROOT, 'README.md'), ...under(join(REPO_ROOT, 'docs'))];
}

/** The text outside fenced code blocks (a link in a code block is an example, not a link). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** The fenced code blocks' text. */
function fences(text: string): string {
  return [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]).join('\n');
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, '').replace(/ /g, '-');
}

/** The anchors of a page's headings; a repeated one gets -1, -2, … as GitHub numbers them. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+?)\s*#*$/gm)) {
    const anchor = anchorOf(m[1]);
    const n = seen.get(anchor) ?? 0;
    seen.set(anchor, n + 1);
    anchors.add(n === 0 ? anchor : `${anchor}-${n}`);
  }
  return anchors;
}

/** Every link of a page that does not resolve: a missing file, or a heading the target page does not have. */
export function brokenLinks(page: string, text: string, read: (file: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const m of prose(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:: not a file of the repository
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
    const body = read(file);
    if (body === undefined) broken.push(`${target}: no such file`);
    else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(body).has(anchor)) broken.push(`${target}: no such heading`);
  }
  return broken;
}

const readIfThere = (file: string) => (existsSync(file) ? (statSync(file).isDirectory() ? '' : readFileSync(file, 'utf8')) : undefined);

/** Repository paths a page names in code (`src/…`, `codegen/…`, …), placeholders such as `<Set>` left out. */
export function namedPaths(text: string): string[] {
  const code = [...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]).join('\n') + '\n' + fences(text);
  const paths = [...code.matchAll(/(?<![\w./-])(?:src|codegen|generated|test|bench)\/[\w./<>*…-]*/g)].map((m) => m[0].replace(/[.,:;]+$/, ''));
  return [...new Set(paths)].filter((p) => !/[<*…]|NNNN/.test(p));
}

/** The folders the architecture page draws under `src/` in its tree of folders. */
function drawnSourceFolders(text: string): string[] {
  const tree = fences(text.slice(text.indexOf('## The folders'))).split('\n');
  const start = tree.findIndex((l) => l.startsWith('src/'));
  const folders: string[] = [];
  for (const line of tree.slice(start + 1)) {
    const m = /^ {2}([a-z][\w/-]*)\/\s/.exec(line);
    if (m) folders.push(m[1]);
    else if (/^\S/.test(line)) break;
  }
  return folders;
}

function sourceFolders(dir = join(REPO_ROOT, 'src')): string[] {
  return readdirSync(dir).flatMap((n) => {
    const path = join(dir, n);
    return statSync(path).isDirectory() ? [relative(join(REPO_ROOT, 'src'), path).split(sep).join('/'), ...sourceFolders(path)] : [];
  });
}

describe('the documentation', () => {
  describe('its checks', () => {
    it('makes anchors as GitHub does', () => {
      expect(anchorOf('EntityEvent: replicating by the change log')).to.equal('entityevent-replicating-by-the-change-log');
      expect(anchorOf('Multi-value lookups: `any` and `all`')).to.equal('multi-value-lookups-any-and-all');
      expect(anchorOf('$expand (batched expansion and metering)')).to.equal('expand-batched-expansion-and-metering');
      expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n')]).to.deep.equal(['a', 'a-1']);
    });

    it('finds a link to a missing file or heading, and passes links outside the repository', () => {
      const files: Record<string, string> = { '/d/a.md': '# Top\n## Here\n', '/d/b.png': '' };
      const text = '[ok](a.md#here) [img](b.png) [web](https://example.com/x) [gone](c.md) [no](a.md#there) [self](#top)\n```\n[code](nowhere.md)\n```\n# Top\n';
      expect(brokenLinks('/d/page.md', text, (f) => files[f] ?? (f === '/d/page.md' ? text : undefined))).to.deep.equal(['c.md: no such file', 'a.md#there: no such heading']);
    });

    it('reads the repository paths a page names in code, leaving placeholders out', () => {
      expect(namedPaths('see `src/http/app.ts`, `generated/routers/<Set>.ts` and\n```\nsrc/query/ (parse)\n```\n')).to.deep.equal(['src/http/app.ts', 'src/query/']);
    });
  });

  for (const page of pages()) {
    it(`${shown(page)}: every relative link resolves`, () => {
      expect(brokenLinks(page, readFileSync(page, 'utf8'), readIfThere), shown(page)).to.deep.equal([]);
    });
  }

  describe('docs/architecture.md', () => {
    const text = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');

    it('names only paths that exist', () => {
      const paths = namedPaths(text);
      expect(paths.length).to.be.greaterThan(50);
      expect(paths.filter((p) => !existsSync(join(REPO_ROOT, p)))).to.deep.equal([]);
    });

    it('draws every folder of src/, and no other', () => {
      expect(drawnSourceFolders(text).sort()).to.deep.equal(sourceFolders().sort());
    });

    it('names every layer of test/layering.test.ts', () => {
      const layering = readFileSync(join(REPO_ROOT, 'test/layering.test.ts'), 'utf8');
      const list = /const LAYERS[^=]*= \[([\s\S]*?)\n\];/.exec(layering)![1];
      const layers = [...list.matchAll(/\[([^\]]*)\]/g)].map((m) => [...m[1].matchAll(/'([\w-]+)'/g)].map((n) => n[1]).join(', '));
      const rows = [...text.matchAll(/^\| (\d+) \| ([\w, -]+) \|/gm)].map((m) => m[2].trim());
      expect(rows).to.deep.equal(layers);
    });
  });
});
