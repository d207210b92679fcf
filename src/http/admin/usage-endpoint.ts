/**
 * Usage for admin clients: `GET /admin/usage?client=&from=&to=` (rows by client, hour and class, as
 * `reso-server usage --json`) and `GET /admin/usage/periods?by=hour|day|month&format=csv` (added up by period,
 * as `reso-server usage --by`, and as CSV; the console's charts and export read it).
 */
import { Errors } from '../../errors/catalogue';
import type { UsageReport, UsageRow } from '../../metering/meter';
import { isUsageGrain, USAGE_GRAINS, usageByPeriod, usageCsv } from '../../metering/usage-periods';
import type { QueryOptions } from '../query-string';
import type { Step } from '../pipeline';

const HOUR = /^\d{4}-\d{2}-\d{2}(T\d{2})?/;

/** The rows a request asks for, this process's counts up to now included (others' arrive within USAGE_APPLY_MS). */
async function requestedRows(meter: UsageReport, q: QueryOptions): Promise<UsageRow[]> {
  for (const bound of ['from', 'to'] as const) {
    if (q[bound] !== undefined && !HOUR.test(q[bound])) throw Errors.OptionValueInvalid(bound, 'a UTC hour YYYY-MM-DDTHH or a date');
  }
  await meter.flush();
  return meter.usage({ client: q.client, from: q.from, to: q.to && q.to.length === 10 ? `${q.to}T23` : q.to });
}

/** After the bearer and admin checks (app.ts). */
function answer(handler: (q: QueryOptions) => Promise<{ type: string; body: string; file?: string }>): Step {
  return (ctx, next) => {
    (async () => {
      const answer = await handler(ctx.query);
      const res = ctx.res;
      res.setHeader('Content-Type', answer.type);
      res.setHeader('Cache-Control', 'no-store');
      if (answer.file) res.setHeader('Content-Disposition', `attachment; filename="${answer.file}"`);
      res.end(answer.body);
    })().catch(next);
  };
}

export function usageReport(meter: UsageReport): Step {
  return answer(async (q) => ({ type: 'application/json; charset=utf-8', body: JSON.stringify({ value: await requestedRows(meter, q) }) }));
}

export function usagePeriods(meter: UsageReport): Step {
  return answer(async (q) => {
    const by = q.by ?? 'hour';
    if (!isUsageGrain(by)) throw Errors.OptionValueInvalid('by', USAGE_GRAINS.join(', '), by);
    if (q.format !== undefined && q.format !== 'csv' && q.format !== 'json') throw Errors.OptionValueInvalid('format', 'csv or json', q.format);
    const rows = usageByPeriod(await requestedRows(meter, q), by);
    if (q.format === 'csv') return { type: 'text/csv; charset=utf-8', body: usageCsv(rows, by), file: `usage-by-${by}.csv` };
    return { type: 'application/json; charset=utf-8', body: JSON.stringify({ by, value: rows }) };
  });
}
