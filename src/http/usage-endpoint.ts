/** `GET /admin/usage?client=&from=&to=`: usage by client, hour and class, for admin clients only. */
import type { RequestHandler } from 'express';
import { Errors } from '../errors/catalogue';
import type { UsageReport } from '../metering/meter';
import { clientOf } from './authentication';

const HOUR = /^\d{4}-\d{2}-\d{2}(T\d{2})?/;

export function usageReport(meter: UsageReport): RequestHandler {
  return (req, res, next) => {
    (async () => {
      if (!clientOf(res)?.admin) throw Errors.AdminRequired('usage');
      const q = req.query as Record<string, string>;
      for (const bound of ['from', 'to'] as const) {
        if (q[bound] !== undefined && !HOUR.test(q[bound])) throw Errors.OptionValueInvalid(bound, 'a UTC hour YYYY-MM-DDTHH or a date');
      }
      // This process's counts up to now are in the report; other processes' arrive within USAGE_APPLY_MS.
      await meter.flush();
      const rows = await meter.usage({ client: q.client, from: q.from, to: q.to && q.to.length === 10 ? `${q.to}T23` : q.to });
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(JSON.stringify({ value: rows }));
    })().catch(next);
  };
}
