/**
 * Helpers for the authentication, licensing and metering tests: a bounded concurrent pool, the token endpoint,
 * and the operator CLI run as a child process.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

import { HttpResult, request } from './http';

/** Runs the tasks with at most `limit` in flight; resolves with their results in order. */
export async function pool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let nextIndex = 0;
  const worker = async () => {
    for (;;) {
      const i = nextIndex++;
      if (i >= tasks.length) return;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** The server's origin (scheme, host, port) from its service root URL. */
export function originOf(serviceRoot: string): string {
  return new URL(serviceRoot).origin;
}

/** POST /oauth2/token with the client-credentials grant, credentials as HTTP Basic or in the form body. */
export async function requestToken(
  serviceRoot: string,
  creds: { id?: string; secret?: string; via: 'basic' | 'form' | 'none' },
  form: Record<string, string> = { grant_type: 'client_credentials' },
): Promise<HttpResult> {
  const body = new URLSearchParams(form);
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (creds.via === 'basic') {
    const pair = `${encodeURIComponent(creds.id ?? '')}:${encodeURIComponent(creds.secret ?? '')}`;
    headers.Authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
  } else if (creds.via === 'form') {
    if (creds.id !== undefined) body.set('client_id', creds.id);
    if (creds.secret !== undefined) body.set('client_secret', creds.secret);
  }
  return request(`${originOf(serviceRoot)}/oauth2/token`, { method: 'POST', headers, body: body.toString() });
}

export const CLI = resolve(__dirname, '../../src/cli/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `node dist/src/cli/main.js <args>` with DATABASE_URL (and `extraEnv`) set; never throws on a non-zero exit. */
export function runCli(databaseUrl: string, args: readonly string[], timeoutMs = 30_000, extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done) => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
    delete env.DEMO_TOKEN;
    delete env.FEED_SCOPE;
    Object.assign(env, extraEnv);
    execFile(process.execPath, [CLI, ...args], { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Parses `clients add` / `clients rotate` output: client_id, client_secret and (with --static-token) the token. */
export function parseCredentials(stdout: string): { id: string; secret: string; token?: string } {
  const id = /^client_id:\s+(\S+)/m.exec(stdout)?.[1];
  const secret = /^client_secret:\s+(\S+)/m.exec(stdout)?.[1];
  const token = /^static token:\s+(\S+)/m.exec(stdout)?.[1];
  if (!id || !secret) throw new Error(`no credentials in CLI output:\n${stdout}`);
  return { id, secret, ...(token ? { token } : {}) };
}

