/** An answer of the service as the explorer shows it: the records as a table beside the JSON, or the OData error body. */
import type { Answer } from './api.js';
import { byId, clear, el, fillTable } from './dom.js';

/** A value as a table cell shows it: lists joined, expanded records counted, objects as JSON. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.every((x) => typeof x !== 'object' || x === null) ? v.join(', ') : `${v.length} record${v.length === 1 ? '' : 's'}`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function records(json: any): Record<string, unknown>[] | undefined {
  if (json && Array.isArray(json.value)) return json.value;
  if (json && typeof json === 'object' && !json.error) return [json];
  return undefined;
}

export function showAnswer(answer: Answer, url: string, page: number): void {
  const status = byId('result-status');
  const errorBox = byId('result-error');
  const table = byId<HTMLTableElement>('result-table');
  clear(errorBox);
  byId('result-json').textContent = answer.json !== undefined ? JSON.stringify(answer.json, null, 2) : answer.text;
  if (!answer.ok) {
    status.textContent = `HTTP ${answer.status}: the service refused ${url}`;
    const e = answer.error;
    if (e) {
      errorBox.append(el('div', { class: 'odata-error' }, el('h4', {}, `${answer.status} ${e.code}`), el('p', { 'data-error-message': '' }, e.message),
        ...(e.target ? [el('p', {}, `Target: ${e.target}`)] : []),
        ...(e.details ?? []).map((d) => el('p', {}, `${d.code}: ${d.message}`))));
    }
    fillTable(table, [], []);
    return;
  }
  const rows = records(answer.json);
  if (!rows) {
    status.textContent = `HTTP ${answer.status}: ${answer.text}`;
    fillTable(table, [], []);
    return;
  }
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => !k.startsWith('@'))))];
  fillTable(table, columns, rows.map((r) => columns.map((c) => cellText(r[c]))));
  const count = answer.json['@odata.count'];
  status.textContent = `Page ${page}: ${rows.length} record${rows.length === 1 ? '' : 's'}`
    + `${count !== undefined ? ` of ${count}` : ''}${answer.json['@odata.nextLink'] ? '; more follow (Next page)' : ''}`;
}
