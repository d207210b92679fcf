/** Operator view: transactions per client and class by hour, day or month, as a chart and a table, with CSV export. */
import { call, download, errorText } from './api.js';
import { byId, el, fillTable } from './dom.js';

declare const Chart: typeof import('chart.js').Chart;

interface PeriodRow { period: string; client: string; A: number; B: number }

const COLOURS = { A: '#0b57a4', B: '#b34700' };

export class UsageView {
  private chart?: import('chart.js').Chart;
  private wired = false;

  async show(): Promise<void> {
    if (!this.wired) {
      this.wired = true;
      byId<HTMLFormElement>('usage-form').onsubmit = (e) => { e.preventDefault(); void this.refresh(); };
      byId('u-csv').onclick = () => void this.csv();
      await this.listClients();
    }
    await this.refresh();
  }

  private async listClients(): Promise<void> {
    const answer = await call('/admin/clients');
    if (!answer.ok) return;
    const select = byId<HTMLSelectElement>('u-client');
    select.append(...(answer.json.value as { id: string }[]).map((c) => el('option', { value: c.id }, c.id)));
  }

  private query(): string {
    const params = new URLSearchParams({ by: byId<HTMLSelectElement>('u-by').value });
    for (const [name, id] of [['client', 'u-client'], ['from', 'u-from'], ['to', 'u-to']]) {
      const v = byId<HTMLInputElement>(id).value;
      if (v) params.set(name, v);
    }
    return params.toString();
  }

  async refresh(): Promise<void> {
    const answer = await call(`/admin/usage/periods?${this.query()}`);
    byId('usage-error').textContent = answer.ok ? '' : answer.error ? errorText(answer.error) : `HTTP ${answer.status}`;
    if (!answer.ok) return;
    const rows = answer.json.value as PeriodRow[];
    fillTable(byId<HTMLTableElement>('usage-table'), undefined, rows.map((r) => [r.period, r.client, r.A, r.B]));
    this.draw(rows);
  }

  /** One bar per period and class, the clients shown added up (the table has them one by one). */
  private draw(rows: readonly PeriodRow[]): void {
    const periods = [...new Set(rows.map((r) => r.period))];
    const total = (cls: 'A' | 'B') => periods.map((p) => rows.filter((r) => r.period === p).reduce((n, r) => n + r[cls], 0));
    const data = {
      labels: periods,
      datasets: (['A', 'B'] as const).map((cls) => ({ label: `class ${cls}`, data: total(cls), backgroundColor: COLOURS[cls] })),
    };
    if (typeof Chart === 'undefined') return;
    if (this.chart) {
      this.chart.data = data;
      this.chart.update();
      return;
    }
    this.chart = new Chart(byId<HTMLCanvasElement>('usage-chart'), {
      type: 'bar',
      data,
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { x: { title: { display: true, text: 'UTC' } }, y: { beginAtZero: true, title: { display: true, text: 'transactions' }, ticks: { precision: 0 } } },
      },
    });
  }

  private async csv(): Promise<void> {
    const answer = await download(`/admin/usage/periods?${this.query()}&format=csv`, 'usage.csv');
    if (!answer.ok) byId('usage-error').textContent = answer.error ? errorText(answer.error) : `HTTP ${answer.status}`;
  }
}
