/**
 * Operator view of the service: its health and readiness probes, a few key figures from its Prometheus
 * metrics (requests by status, in progress, the usage journal's lag, memory, event-loop delay, uptime), and
 * the webhook subscriptions with their lag and failures, and the upstreams pulled into it with their state and lag.
 * Each read with the signed-in admin token.
 */
import { Answer, call, errorText } from './api.js';
import { byId, el, fillTable } from './dom.js';

interface Sample { readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly value: number }

/** The samples of a Prometheus text exposition (comments and blank lines skipped). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

const sum = (samples: readonly Sample[], name: string, keep: (s: Sample) => boolean = () => true) =>
  samples.filter((s) => s.name === name && keep(s)).reduce((n, s) => n + s.value, 0);
const one = (samples: readonly Sample[], name: string) => samples.find((s) => s.name === name)?.value;

/** The figures an operator looks at first, as label and text. */
function keyFigures(samples: readonly Sample[]): [string, string][] {
  const requests = (digit: string) => String(sum(samples, 'reso_http_requests_total', (s) => (s.labels.status ?? '').startsWith(digit)));
  const started = one(samples, 'process_start_time_seconds');
  const memory = one(samples, 'process_resident_memory_bytes');
  const loop = one(samples, 'nodejs_eventloop_lag_p99_seconds');
  const journal = one(samples, 'reso_usage_journal_lag_seconds');
  return [
    ['Requests answered 2xx', requests('2')], ['Requests answered 4xx', requests('4')], ['Requests answered 5xx', requests('5')],
    ['Requests in progress', String(sum(samples, 'reso_http_requests_in_progress'))],
    ['Usage journal behind by', journal === undefined ? 'n/a' : `${journal.toFixed(1)} s`],
    ['Resident memory', memory === undefined ? 'n/a' : `${(memory / 1048576).toFixed(0)} MiB`],
    ['Event-loop delay (p99)', loop === undefined ? 'n/a' : `${(loop * 1000).toFixed(1)} ms`],
    ['Up for', started === undefined ? 'n/a' : `${Math.round(Date.now() / 1000 - started)} s`],
  ];
}

function refusal(a: Answer, what: string): string {
  if (a.status === 404) return `${what}: not served on this port (see METRICS_PORT) or not enabled`;
  return `${what}: ${a.error ? errorText(a.error) : `HTTP ${a.status}`}`;
}

export class ServiceView {
  async show(): Promise<void> {
    byId('service-refresh').onclick = () => void this.show();
    const [health, ready, metrics, hooks, upstreams] = await Promise.all([
      call('/health'), call('/ready'), call('/metrics', { headers: { Accept: 'text/plain' } }), call('/admin/webhooks'), call('/admin/upstreams'),
    ]);
    const probe = (a: Answer) => (a.ok ? String(a.json?.status ?? 'ok') : a.error ? errorText(a.error) : `HTTP ${a.status}`);
    byId('health').replaceChildren(el('dt', {}, 'Health (/health)'), el('dd', { 'data-probe': 'health' }, probe(health)),
      el('dt', {}, 'Readiness (/ready)'), el('dd', { 'data-probe': 'ready' }, probe(ready)));
    const figures = metrics.ok ? keyFigures(parseMetrics(metrics.text)) : [];
    byId('metrics').replaceChildren(...figures.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { 'data-metric': k }, v)]));
    byId('metrics-error').textContent = metrics.ok ? '' : refusal(metrics, 'Metrics');
    byId('webhooks-error').textContent = hooks.ok ? '' : refusal(hooks, 'Webhook subscriptions');
    const rows = hooks.ok ? (hooks.json.value as Record<string, any>[]) : [];
    fillTable(byId<HTMLTableElement>('webhooks'), undefined, rows.map((s) => [
      s.id, s.client, s.url, s.state, s.cursor, s.lag ? s.lag.events : (s.lagError ?? '-'), s.waitingSince ?? '-',
      s.failures, s.lastError ?? '-', s.lastSuccess ?? '-', s.nextAttempt ?? '-',
    ]));
    showUpstreams(upstreams);
  }
}

/** Each upstream a row; a paused or stopped one says why in its state. */
function showUpstreams(answer: Answer): void {
  byId('upstreams-error').textContent = answer.ok ? '' : refusal(answer, 'Upstreams');
  const rows = answer.ok ? (answer.json.value as Record<string, any>[]) : [];
  const state = (u: Record<string, any>) => (u.state === 'paused' ? 'paused (pull resume to go on)' : u.state === 'stopped' ? `stopped: ${u.lastError ?? 'no reason recorded'}` : u.state);
  fillTable(byId<HTMLTableElement>('upstreams'), undefined, rows.map((u) => [
    u.name, u.url, (u.sets as { upstream: string; local: string }[]).map((s) => (s.upstream === s.local ? s.local : `${s.upstream} → ${s.local}`)).join(', '),
    u.strategy, state(u), u.lastSuccess ?? 'not yet', u.lagSeconds ?? '-', u.recordsPulled, u.lastError ?? '-',
  ]));
}
