/**
 * What `reso-server init` prints for the operator to review: the dictionary it wrote and how to see what it added,
 * each default with its reason (and the ones that did not apply), each set with its key and what a query may
 * filter and order on, the migration history, and the next command.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { BuiltModel } from './build-model';
import type { BuiltEntitySet } from './built-entity-set';
import type { DefaultsPlan } from './default-policy';

/** Whether the project starts a new migration history or keeps the one it has (init.ts says when). */
export type History = 'new' | 'kept';

/** What the project's dictionary was: none, this very one, the demo one, or one of the operator's own. */
export type Replaced = 'none' | 'same' | 'demo' | 'own';

export interface Review {
  /** The operator's file, as given. */
  readonly source: string;
  readonly dir: string;
  /** The project's dictionary, written. */
  readonly target: string;
  readonly plan: DefaultsPlan;
  readonly model: BuiltModel;
  readonly history: History;
  readonly replaced: Replaced;
}

const REPLACED: Readonly<Record<Replaced, string>> = { none: '', same: '', demo: ' (it replaces the demo dictionary)', own: ' (it replaces your earlier dictionary)' };

const CAPABILITIES = /: Capabilities\.(Filter|Sort)Restrictions /;

export function reviewLines(r: Review): string[] {
  const target = shown(r.target);
  const added = r.plan.applied.length;
  const lines = [
    r.replaced === 'same' ? `reso-server init: ${target} already held this dictionary; generated/ regenerated and built`
      : `reso-server init: ${target} is now ${r.source}${added ? `, with ${added} additions where it stated no policy` : ''}${REPLACED[r.replaced]}`,
  ];
  if (added && r.replaced !== 'same') lines.push(`  (compare: git diff --no-index ${r.source} ${target}; each addition follows a comment "added by reso-server init")`);
  lines.push('', 'Policy added where the dictionary stated none (docs/dictionary.md "Starting from your own dictionary"):');
  const policy = r.plan.applied.filter((a) => !CAPABILITIES.test(a.what));
  for (const a of policy) lines.push(`  - ${a.what}: ${a.why}`);
  const restricted = r.plan.applied.filter((a) => CAPABILITIES.test(a.what));
  const sets = new Set(restricted.map((a) => a.what.split(':')[0]));
  if (sets.size) {
    lines.push(`  - Capabilities.FilterRestrictions and SortRestrictions on ${sets.size} set${sets.size === 1 ? '' : 's'}: each filters and orders on its key `
      + 'and change timestamp only (and the listing root on the spec\'s §4 fields); a query on another field answers 501. '
      + 'To offer one, take it out of the set\'s NonFilterableProperties/NonSortableProperties (each costs an index)');
  }
  if (policy.length + sets.size === 0) lines.push('  (none: the dictionary states it all)');
  if (r.plan.notApplied.length) {
    lines.push('', 'Not added:');
    for (const n of r.plan.notApplied) lines.push(`  - ${n}`);
  }
  lines.push('', `Entity sets (${r.model.entitySets.length}): key; what $filter and $orderby may name (anything else: 501)`);
  const width = Math.min(40, Math.max(...r.model.entitySets.map((s) => label(s).length)));
  for (const set of r.model.entitySets) lines.push(`  ${label(set).padEnd(width)}  ${describe(set)}`);
  lines.push('', ...historyLines(r), '', `Next: npm start${r.dir === process.cwd() ? '' : ` (in ${r.dir})`}`
    + ' — it prints a demo client\'s token; then GET /odata/ and /odata/$metadata, and load your records with reso-server ingest');
  return lines;
}

function label(set: BuiltEntitySet): string {
  return `${set.name}${set.listingRoot ? ' (listing root)' : ''}${set.changeLog ? ' (change log)' : ''}`;
}

function describe(set: BuiltEntitySet): string {
  const filter = set.fields.filter((f) => f.filterable).map((f) => f.name);
  const order = set.fields.filter((f) => f.sortable).map((f) => f.name);
  const same = filter.join() === order.join();
  const parts = [`key ${set.key}`, same ? `filter and order: ${filter.join(', ') || 'none'}` : `filter: ${filter.join(', ') || 'none'}; order: ${order.join(', ') || 'none'}`];
  const expand = set.navigations.filter((n) => n.followable).map((n) => `${n.name}${n.charged ? ' (charged)' : ''}`);
  if (set.listingRoot && expand.length) parts.push(`expand: ${expand.join(', ')}`);
  return parts.join('; ');
}

function historyLines(r: Review): string[] {
  if (r.history === 'kept') {
    return ['Migration history: kept (generated/migrations/): a change of the dictionary is its next migration, applied at start to the database that serves it.'];
  }
  const demo = join(r.dir, 'data/reso.sqlite');
  return [
    'Migration history: new (generated/migrations/0001-initial.ts creates every table): start on an empty database.',
    ...(existsSync(demo) ? [`  ${shown(demo)} holds the database of the dictionary replaced: remove it, or set DATABASE_URL to a new database, before npm start.`] : []),
  ];
}

/** A path from the working folder when inside it. */
function shown(path: string): string {
  const inside = relative(process.cwd(), path);
  return inside && !inside.startsWith('..') ? inside : path;
}
