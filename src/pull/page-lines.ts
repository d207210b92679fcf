/** An upstream page's records as ingest lines of the local set, with the upstream's own timestamps beside them. */
import type { PageLine } from './page-writer';
import type { PullContext, SetPull } from './pull-context';
import { RecordFit } from './record-fit';

const fits = new WeakMap<PullContext, Map<string, RecordFit>>();

/** Records without their key are skipped with one log line each; fields the local set lacks are named once. */
export function linesOf(context: PullContext, pull: SetPull, records: readonly Readonly<Record<string, unknown>>[]): PageLine[] {
  const fit = fitOf(context, pull);
  const timestamp = pull.set.changeTimestamp;
  const lines: PageLine[] = [];
  records.forEach((record, i) => {
    const fitted = fit.fit(record);
    if (fitted.problem !== undefined) {
      context.log(`pull ${context.settings.name}: ${pull.pulled.upstream}: record skipped: ${fitted.problem}`);
      return;
    }
    const stamp = timestamp ? record[timestamp] : undefined;
    lines.push({ line: i + 1, input: fitted.input, upstreamTimestamp: typeof stamp === 'string' ? stamp : null });
  });
  return lines;
}

function fitOf(context: PullContext, pull: SetPull): RecordFit {
  const bySet = fits.get(context) ?? fits.set(context, new Map()).get(context)!;
  let fit = bySet.get(pull.set.name);
  if (!fit) {
    fit = new RecordFit(pull.set, (field) => context.log(`pull ${context.settings.name}: ${pull.pulled.upstream}: field ${field} is not in the local `
      + `dictionary's ${pull.set.name}; dropped (said once)`));
    bySet.set(pull.set.name, fit);
  }
  return fit;
}
