/** A bench's own section of docs/benchmarks.md, between its markers, replaced by each `--write` run. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const DOC = join(resolve(__dirname, '../..'), 'docs/benchmarks.md');

/** `family`: the section's marker name; `heading` follows the run's date; `command`: what produced it. */
export function writeBenchSection(family: string, heading: string, command: string, table: string): void {
  const [begin, end] = [`<!-- bench-family ${family} -->`, `<!-- /bench-family ${family} -->`];
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const section = [begin, `### ${heading.replace('{when}', `${when} UTC`)}`, '', `\`${command}\``, '', table, end].join('\n');
  const doc = readFileSync(DOC, 'utf8');
  const at = doc.indexOf(begin);
  const next = at < 0 ? `${doc.trimEnd()}\n\n${section}\n` : `${doc.slice(0, at)}${section}${doc.slice(doc.indexOf(end) + end.length)}`;
  writeFileSync(DOC, next);
}
