/**
 * Usage by period: the usage table's hourly counts per client and class added up by hour, day or month (UTC),
 * and the same rows as CSV. `reso-server usage --by` and `GET /admin/usage/periods` (the console's charts and
 * its CSV export) both read them from here.
 */
import type { UsageRow } from '../storage/tables/usage-table';

export const USAGE_GRAINS = ['hour', 'day', 'month'] as const;
export type UsageGrain = (typeof USAGE_GRAINS)[number];

export interface UsagePeriodRow {
  /** `YYYY-MM-DDTHH` (hour), `YYYY-MM-DD` (day) or `YYYY-MM` (month), UTC. */
  readonly period: string;
  readonly client: string;
  readonly A: number;
  readonly B: number;
}

const PERIOD_LENGTH: Readonly<Record<UsageGrain, number>> = { hour: 13, day: 10, month: 7 };

export function isUsageGrain(s: string): s is UsageGrain {
  return (USAGE_GRAINS as readonly string[]).includes(s);
}

/** Rows by period then client, each with both classes' counts. */
export function usageByPeriod(rows: readonly UsageRow[], grain: UsageGrain): UsagePeriodRow[] {
  const byKey = new Map<string, { period: string; client: string; A: number; B: number }>();
  for (const r of rows) {
    const period = r.hour.slice(0, PERIOD_LENGTH[grain]);
    const key = `${period}\u0000${r.client}`;
    const row = byKey.get(key) ?? byKey.set(key, { period, client: r.client, A: 0, B: 0 }).get(key)!;
    row[r.class] += r.count;
  }
  return [...byKey.values()].sort((a, b) => (a.period === b.period ? compare(a.client, b.client) : compare(a.period, b.period)));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** RFC 4180 CSV with a header row; a cell a spreadsheet would take for a formula is quoted and prefixed. */
export function usageCsv(rows: readonly UsagePeriodRow[], grain: UsageGrain): string {
  const lines = [[`${grain} (UTC)`, 'client', 'class A', 'class B'], ...rows.map((r) => [r.period, r.client, String(r.A), String(r.B)])];
  return lines.map((cells) => cells.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n']/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
