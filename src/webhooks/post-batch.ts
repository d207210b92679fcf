/**
 * One webhook POST (RCP-028): a batch of EntityEvents as `{"@reso.context": …, "value": [...]}` with the
 * consumer's bearer token and the feed's EntityEventSource header, given up after a timeout. The answer is
 * classified for the worker: delivered (2xx), asked to wait (429 with its Retry-After), or failed.
 */
import { retryAfterMs } from '../foundation/retry-waits';

/** RESO Common Format's context of an EntityEvent payload. */
export const ENTITY_EVENT_CONTEXT = 'urn:reso:metadata:2.0:resource:entityevent';

/** Longest Retry-After honoured; a consumer asking for more is tried again after this. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

export interface PushTarget {
  readonly url: string;
  readonly token: string;
  readonly source: string;
}

export type PushResult =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'wait'; readonly status: number; readonly retryAfterMs?: number }
  | { readonly kind: 'failed'; readonly error: string };

/** The body of a batch: records are the events' JSON texts as the client's query returns them. */
export function batchBody(records: readonly string[]): string {
  return `{"@reso.context":${JSON.stringify(ENTITY_EVENT_CONTEXT)},"value":[${records.join(',')}]}`;
}

/** POSTs one batch; `stop` ends it early (the worker is stopping). */
export async function postBatch(target: PushTarget, records: readonly string[], timeoutMs: number, now: number, stop?: AbortSignal): Promise<PushResult> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await fetch(target.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        Authorization: `Bearer ${target.token}`,
        EntityEventSource: target.source,
      },
      body: batchBody(records),
      redirect: 'manual',
      signal: stop ? AbortSignal.any([timeout, stop]) : timeout,
    });
  } catch (e) {
    return { kind: 'failed', error: timeout.aborted ? `no answer within ${timeoutMs} ms` : failure(e) };
  }
  // The body is not needed; reading it (bounded by the same timeout) frees the connection.
  await res.arrayBuffer().catch(() => undefined);
  if (res.status >= 200 && res.status < 300) return { kind: 'delivered', status: res.status };
  if (res.status === 429) return { kind: 'wait', status: 429, retryAfterMs: retryAfter(res.headers.get('retry-after'), now) };
  return { kind: 'failed', error: `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` };
}

/** Retry-After as delay-seconds or an HTTP-date, in milliseconds from `now` (bounded); undefined when absent or unreadable. */
export function retryAfter(value: string | null, now: number): number | undefined {
  const ms = retryAfterMs(value, now);
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

function failure(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const cause = err?.cause?.code ?? err?.cause?.message;
  return `${err?.message ?? String(e)}${cause ? ` (${cause})` : ''}`;
}
