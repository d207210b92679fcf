/** Operator view: the clients, adding one (with its licence checked live by the service), rotating and revoking. */
import { Answer, call, errorText } from './api.js';
import { byId, debounce, el, fillTable } from './dom.js';

interface ClientRow {
  id: string; name: string; scope?: string; hiddenFields: string[]; rateLimit?: number; admin: boolean; revokedAt?: string;
}

const hiddenList = () => byId<HTMLInputElement>('c-hidden').value.split(',').map((f) => f.trim()).filter(Boolean);

export class ClientsView {
  private wired = false;

  async show(): Promise<void> {
    if (!this.wired) this.wire();
    await this.refresh();
  }

  private wire(): void {
    this.wired = true;
    const check = debounce(() => void this.checkLicence(), 300);
    byId('c-scope').oninput = check;
    byId('c-hidden').oninput = check;
    byId<HTMLFormElement>('add-client').onsubmit = (e) => { e.preventDefault(); void this.add(); };
    byId('secret-done').onclick = () => { byId('secret-box').hidden = true; byId('secret-list').replaceChildren(); };
  }

  async refresh(): Promise<void> {
    const answer = await call('/admin/clients');
    if (!answer.ok) return this.message(answer);
    const rows = (answer.json.value as ClientRow[]).map((c) => [
      c.id, c.name, c.revokedAt ? `revoked ${c.revokedAt}` : 'active', c.admin ? 'admin' : 'client', c.scope ?? '(all listings)',
      c.hiddenFields.join(', ') || '-', c.rateLimit ? `${c.rateLimit}/min` : '-', this.actions(c),
    ]);
    fillTable(byId<HTMLTableElement>('client-list'), undefined, rows);
  }

  private actions(c: ClientRow): Node {
    if (c.revokedAt) return document.createTextNode('-');
    const rotate = el('button', { type: 'button', 'data-rotate': c.id, 'aria-label': `Rotate the secret of ${c.id}` }, 'Rotate');
    const revoke = el('button', { type: 'button', 'data-revoke': c.id, 'aria-label': `Revoke ${c.id}` }, 'Revoke');
    rotate.onclick = () => void this.act(c.id, 'rotate', `Give ${c.id} a new secret? Its old secret and every token it holds stop working.`);
    revoke.onclick = () => void this.act(c.id, 'revoke', `Revoke ${c.id}? Its secret and every token it holds stop working.`);
    return el('span', { class: 'row' }, rotate, revoke);
  }

  private async act(id: string, action: 'rotate' | 'revoke', question: string): Promise<void> {
    if (!window.confirm(question)) return;
    const answer = await call(`/admin/clients/${encodeURIComponent(id)}/${action}`, { method: 'POST' });
    if (!answer.ok) return this.message(answer);
    if (action === 'rotate') {
      this.showSecrets({ client_id: id, client_secret: answer.json.secret, 'static token': answer.json.staticToken });
      byId('clients-message').textContent = `${id}: new secret; ${answer.json.tokensEnded} earlier token(s) no longer work.`;
    } else {
      byId('clients-message').textContent = `${id} revoked: its secret and tokens no longer work.`;
    }
    await this.refresh();
  }

  /** Asks the service whether it could apply this scope and these hidden fields, and shows its answer beside them. */
  private async checkLicence(): Promise<boolean> {
    const scope = byId<HTMLTextAreaElement>('c-scope').value;
    const answer = await call('/admin/licence-check', { method: 'POST', body: { scope, hiddenFields: hiddenList() } });
    const bad = answer.error;
    for (const [target, input, out] of [['scope', 'c-scope', 'c-scope-error'], ['hiddenFields', 'c-hidden', 'c-hidden-error']]) {
      const mine = !!bad && (bad.target === target || (target === 'scope' && !bad.target));
      byId(out).textContent = mine ? errorText(bad!) : '';
      byId(input).setAttribute('aria-invalid', String(mine));
    }
    return answer.ok;
  }

  private async add(): Promise<void> {
    const value = (id: string) => byId<HTMLInputElement>(id).value.trim();
    const rate = value('c-rate');
    const answer = await call('/admin/clients', {
      method: 'POST',
      body: {
        name: value('c-name'), id: value('c-id') || undefined, scope: value('c-scope') || undefined, hiddenFields: hiddenList(),
        rateLimit: rate ? Number(rate) : undefined, admin: byId<HTMLInputElement>('c-admin').checked, staticToken: byId<HTMLInputElement>('c-static').checked,
      },
    });
    byId('c-error').textContent = '';
    if (!answer.ok) {
      if (answer.error?.target === 'scope' || answer.error?.target === 'hiddenFields') await this.checkLicence();
      else byId('c-error').textContent = answer.error ? errorText(answer.error) : `HTTP ${answer.status}`;
      return;
    }
    this.showSecrets({ client_id: answer.json.client.id, client_secret: answer.json.secret, 'static token': answer.json.staticToken });
    byId<HTMLFormElement>('add-client').reset();
    await this.refresh();
  }

  /** The new credentials, shown once: they are not kept anywhere else in the page. */
  private showSecrets(values: Record<string, string | undefined>): void {
    byId('secret-list').replaceChildren(...Object.entries(values).flatMap(([k, v]) => (v ? [el('dt', {}, k), el('dd', { 'data-secret': k }, v)] : [])));
    byId('secret-box').hidden = false;
    byId('secret-box').focus();
  }

  private message(answer: Answer): void {
    byId('clients-message').textContent = answer.error ? errorText(answer.error) : `HTTP ${answer.status}`;
  }
}
