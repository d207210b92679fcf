/** The API explorer: a set's fields from the client's $metadata, a query builder, and the answers page by page. */
import { Answer, call, errorText } from './api.js';
import { byId, clear, el, fillTable } from './dom.js';
import { buildUrl, Condition, describeCost, ExplorerPolicy, FieldView, literal, readMetadata, SetView, transactionsOf } from './explorer-model.js';
import { showAnswer } from './explorer-result.js';

const SERVICE_ROOT = `${location.origin}/odata`;
const OPERATORS: Readonly<Record<string, readonly string[]>> = {
  'Edm.String': ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'startswith'],
  'Edm.Boolean': ['eq', 'ne'],
};
const COMPARISONS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];

export class Explorer {
  private sets: SetView[] = [];
  private nextLink?: string;
  private page = 0;

  constructor(private readonly policy: ExplorerPolicy) {}

  /** Reads the client's $metadata and shows the first set. */
  async start(): Promise<Answer> {
    const answer = await call(`${SERVICE_ROOT}/$metadata?$format=json`);
    if (!answer.ok) return answer;
    this.sets = readMetadata(answer.json, this.policy);
    const select = byId<HTMLSelectElement>('set');
    select.replaceChildren(...this.sets.map((s) => el('option', { value: s.name }, s.name)));
    select.onchange = () => this.showSet();
    byId('add-condition').onclick = () => this.addCondition();
    byId('query-form').oninput = (e) => { if ((e.target as HTMLElement).id !== 'q-url') this.refreshUrl(); else this.refreshCost(); };
    // The URL box itself may be edited: a change there is run as written, not rebuilt from the choices.
    byId('query-form').onchange = (e) => { if ((e.target as HTMLElement).id !== 'q-url') this.refreshUrl(); };
    byId<HTMLFormElement>('query-form').onsubmit = (e) => { e.preventDefault(); void this.run(this.url(), true); };
    byId('next-page').onclick = () => { if (this.nextLink) void this.run(this.nextLink, false); };
    this.showSet();
    return answer;
  }

  private get set(): SetView {
    return this.sets.find((s) => s.name === byId<HTMLSelectElement>('set').value) ?? this.sets[0];
  }

  private showSet(): void {
    const set = this.set;
    const yes = (b: boolean) => (b ? 'yes' : 'no');
    fillTable(byId<HTMLTableElement>('fields'), undefined, set.fields.map((f) => [
      f.name, `${f.collection ? 'Collection(' : ''}${f.type}${f.collection ? ')' : ''}`,
      f.lookup ? el('button', { type: 'button', 'data-lookup': f.lookup, 'aria-label': `Show the values of ${f.lookup}` }, f.lookup) : '',
      yes(f.filterable && !f.restricted), yes(f.sortable && !f.restricted), yes(f.restricted),
    ]));
    for (const b of byId('fields').querySelectorAll<HTMLButtonElement>('button[data-lookup]')) b.onclick = () => void this.showLookup(b.dataset.lookup!);
    byId('set-facts').textContent = `Key: ${set.key}. Expandable: ${set.expandable.join(', ') || 'none'}`
      + `${set.charged.length ? ` (each expansion of ${set.charged.join(', ')} costs one more transaction)` : ''}.`;
    clear(byId('conditions'));
    const sortable = set.fields.filter((f) => f.sortable && !f.restricted);
    byId<HTMLSelectElement>('q-orderby').replaceChildren(el('option', { value: '' }, '(default order)'), ...sortable.map((f) => el('option', { value: f.name }, f.name)));
    byId<HTMLSelectElement>('q-select').replaceChildren(...set.fields.map((f) => el('option', { value: f.name }, f.name)));
    byId('q-expand').replaceChildren(el('legend', {}, 'Expand'), ...(set.expandable.length ? set.expandable.map((n) => el('label', { class: 'check' },
      el('input', { type: 'checkbox', value: n, 'data-expand': n }), n, set.charged.includes(n) ? ' (charged)' : '')) : ['nothing to expand']));
    for (const id of ['q-key', 'q-top']) byId<HTMLInputElement>(id).value = '';
    byId<HTMLInputElement>('q-count').checked = false;
    this.refreshUrl();
  }

  private addCondition(): void {
    const filterable = this.set.fields.filter((f) => f.filterable && !f.restricted && !f.collection);
    const n = byId('conditions').children.length + 1;
    const field = el('select', { id: `c${n}-field`, 'aria-label': `Condition ${n}: field` }, ...filterable.map((f) => el('option', { value: f.name }, f.name)));
    const op = el('select', { id: `c${n}-op`, 'aria-label': `Condition ${n}: operator` });
    const value = el('input', { id: `c${n}-value`, 'aria-label': `Condition ${n}: value`, autocomplete: 'off' });
    const remove = el('button', { type: 'button', 'aria-label': `Remove condition ${n}` }, 'Remove');
    const row = el('div', { class: 'condition', 'data-condition': '' }, field, op, value, remove);
    const operators = () => {
      const f = filterable.find((x) => x.name === field.value);
      op.replaceChildren(...(OPERATORS[f?.type ?? ''] ?? COMPARISONS).map((o) => el('option', { value: o }, o)));
      value.placeholder = f?.type === 'Edm.DateTimeOffset' ? '2026-01-01T00:00:00Z' : f?.lookup ? `a ${f.lookup} value` : '';
    };
    field.onchange = operators;
    remove.onclick = () => { row.remove(); this.refreshUrl(); };
    operators();
    byId('conditions').append(row);
    field.focus();
    this.refreshUrl();
  }

  private conditions(): Condition[] {
    return [...byId('conditions').querySelectorAll<HTMLElement>('[data-condition]')].flatMap((row) => {
      const [field, op, value] = row.querySelectorAll<HTMLInputElement | HTMLSelectElement>('select, input');
      const f = this.set.fields.find((x) => x.name === field.value);
      return f && value.value !== '' ? [{ field: f, op: op.value, value: value.value }] : [];
    });
  }

  private refreshUrl(): void {
    const value = (id: string) => byId<HTMLInputElement>(id).value.trim();
    byId<HTMLTextAreaElement>('q-url').value = buildUrl(SERVICE_ROOT, this.set, {
      key: value('q-key') || undefined,
      conditions: this.conditions(),
      orderBy: value('q-orderby') || undefined,
      direction: value('q-direction') === 'desc' ? 'desc' : 'asc',
      select: [...byId<HTMLSelectElement>('q-select').selectedOptions].map((o) => o.value),
      expand: [...byId('q-expand').querySelectorAll<HTMLInputElement>('input[data-expand]:checked')].map((i) => i.value),
      top: value('q-top') || undefined,
      count: byId<HTMLInputElement>('q-count').checked,
    });
    this.refreshCost();
  }

  private url(): string {
    return byId<HTMLTextAreaElement>('q-url').value.trim();
  }

  private refreshCost(): void {
    const counts = transactionsOf(this.url(), this.sets, this.policy);
    const perPage = !!counts && !/\/odata\/[^/?]+\([^)]*\)(\?|$)/.test(this.url());
    byId('q-class').textContent = counts ? describeCost(counts, perPage) : 'Not a data URL of this service';
  }

  /** Runs a request (a new query, or the next page of the last) and shows its answer. */
  private async run(url: string, fresh: boolean): Promise<void> {
    const size = byId<HTMLInputElement>('q-pagesize').value.trim();
    const headers: Record<string, string> = size ? { Prefer: `odata.maxpagesize=${size}` } : {};
    if (fresh) this.page = 0;
    byId('result').hidden = false;
    byId('result-status').textContent = 'Running…';
    const answer = await call(url, { headers });
    this.page = answer.ok ? this.page + 1 : this.page;
    this.nextLink = answer.ok ? answer.json?.['@odata.nextLink'] : undefined;
    byId<HTMLButtonElement>('next-page').disabled = !this.nextLink;
    showAnswer(answer, url, this.page);
  }

  private async showLookup(name: string): Promise<void> {
    const box = byId('lookup-values');
    const lookups = this.policy.lookups;
    if (!lookups) return;
    const url = `${SERVICE_ROOT}/${lookups.set}?$filter=${encodeURIComponent(`${lookups.nameField} eq ${literal('Edm.String', name)}`)}&$select=${lookups.valueField}&$top=1000`;
    const answer = await call(url);
    box.replaceChildren(el('h3', {}, `Values of ${name}`), answer.ok
      ? el('p', {}, (answer.json.value as Record<string, string>[]).map((r) => r[lookups.valueField]).join(', ') || '(none)')
      : el('p', { class: 'error' }, answer.error ? errorText(answer.error) : `HTTP ${answer.status}`),
    el('p', { class: 'hint' }, `Read from ${lookups.set} with your token: 1 class ${this.policy.transactions.query} transaction.`));
  }
}

export type { FieldView };
