/**
 * Requests to the service with the signed-in token. The token lives in this module's memory only: never
 * stored, never in a URL, never in a cookie; reloading the page forgets it.
 */

export interface ODataError {
  readonly code: string;
  readonly message: string;
  readonly target?: string;
  readonly details?: readonly { code: string; message: string; target?: string }[];
}

export interface Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly text: string;
  /** The body parsed, when it is JSON. */
  readonly json: any;
  /** The OData error body's error, when the service refused. */
  readonly error?: ODataError;
}

let token: string | undefined;

export function signIn(value: string): void {
  token = value;
}

export function signOut(): void {
  token = undefined;
}

/** A request with `Authorization: Bearer <token>`; the body, if an object, is sent as JSON. */
export async function call(url: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { Accept: 'application/json', ...init.headers };
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body, credentials: 'omit', cache: 'no-store' });
  return answerOf(res);
}

/** The answer's body read, parsed when it is JSON, and its OData error picked out. */
async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const error = !res.ok && json?.error && typeof json.error.code === 'string' ? (json.error as ODataError) : undefined;
  return { status: res.status, ok: res.ok, text, json, error };
}

/** A download of a token-checked resource (the CSV export): fetched with the token, saved from memory. */
export async function download(url: string, fallbackName: string): Promise<Answer> {
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, credentials: 'omit', cache: 'no-store' });
  if (!res.ok) return answerOf(res);
  const blob = await res.blob();
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? fallbackName;
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  return { status: res.status, ok: true, text: '', json: undefined };
}

/** What a person reads of an error: its message, and the service's own error inside it when there is one. */
export function errorText(e: ODataError): string {
  const inner = e.details?.[0];
  return inner ? `${inner.message} (${inner.code})` : `${e.message} (${e.code})`;
}
