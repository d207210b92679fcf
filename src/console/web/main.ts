/**
 * The console's entry: sign in with a token (kept in memory only), then the views the token may open: the
 * API explorer for any client, the operator views (clients, usage, service health and webhooks) for an admin.
 */
import { call, signIn, signOut } from './api.js';
import { ClientsView } from './clients-view.js';
import { byId } from './dom.js';
import { Explorer } from './explorer-view.js';
import type { ExplorerPolicy } from './explorer-model.js';
import { ServiceView } from './service-view.js';
import { UsageView } from './usage-view.js';

const VIEWS = ['explorer', 'clients', 'usage', 'service'] as const;
type View = (typeof VIEWS)[number];

let policy: ExplorerPolicy | undefined;
const clients = new ClientsView();
const usage = new UsageView();
const service = new ServiceView();

async function submitToken(e: Event): Promise<void> {
  e.preventDefault();
  const input = byId<HTMLInputElement>('token');
  const error = byId('sign-in-error');
  const token = input.value.trim();
  if (!token) {
    error.textContent = 'Enter an access token.';
    return input.focus();
  }
  signIn(token);
  const answer = await call('/console/api/explorer');
  if (!answer.ok) {
    signOut();
    error.textContent = answer.error?.message ?? `the service answered HTTP ${answer.status}`;
    input.setAttribute('aria-invalid', 'true');
    return input.focus();
  }
  input.value = '';
  error.textContent = '';
  policy = answer.json as ExplorerPolicy;
  byId('who').textContent = `Signed in as ${policy.client.name} (${policy.client.id}${policy.client.admin ? ', admin' : ''})`;
  byId('sign-in').hidden = true;
  byId('sign-out').hidden = false;
  byId('views').hidden = false;
  for (const b of document.querySelectorAll<HTMLButtonElement>('#views button[data-admin]')) b.hidden = !policy.client.admin;
  const explorer = new Explorer(policy);
  const started = await explorer.start();
  if (!started.ok) byId('sign-in-error').textContent = started.error?.message ?? `$metadata: HTTP ${started.status}`;
  await show(policy.client.admin ? 'clients' : 'explorer');
}

async function show(view: View): Promise<void> {
  if (!policy) return;
  // An operator view is not even drawn for a client that is not an admin (the service refuses its data anyway).
  if (view !== 'explorer' && !policy.client.admin) view = 'explorer';
  for (const v of VIEWS) byId(v).hidden = v !== view;
  for (const b of document.querySelectorAll<HTMLButtonElement>('#views button')) {
    if (b.dataset.view === view) b.setAttribute('aria-current', 'page');
    else b.removeAttribute('aria-current');
  }
  document.body.dataset.view = view;
  if (view === 'clients') await clients.show();
  if (view === 'usage') await usage.show();
  if (view === 'service') await service.show();
  document.body.dataset.ready = view;
}

function start(): void {
  byId<HTMLFormElement>('sign-in-form').onsubmit = (e) => void submitToken(e);
  byId('sign-out').onclick = () => { signOut(); location.reload(); };
  for (const b of document.querySelectorAll<HTMLButtonElement>('#views button')) b.onclick = () => void show(b.dataset.view as View);
  byId('token').focus();
}

start();
