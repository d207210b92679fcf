/**
 * Requests Node's HTTP parser refuses before any handler sees them (a request head over the limit, bytes that are
 * not HTTP, a request that never arrives whole). Node would answer them with a bare status line; a client gets
 * the same OData error body here as from every other refusal, then the connection closes, since its stream
 * cannot be trusted to continue.
 */
import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Errors } from '../errors/catalogue';
import type { ServiceError } from '../errors/catalogue';
import { errorAnswer } from './error-status';

export function answerClientErrors(server: Server, headLimitBytes: number): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    // A peer that went away: nothing can be said any more.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(rawAnswer(clientError(err.code, headLimitBytes)));
  });
}

function clientError(code: string | undefined, headLimitBytes: number): ServiceError {
  if (code === 'HPE_HEADER_OVERFLOW') return Errors.RequestHeadTooLarge(headLimitBytes);
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return Errors.RequestTimedOut();
  return Errors.RequestMalformed('the request is not valid HTTP/1.1');
}

function rawAnswer(e: ServiceError): string {
  const { status, headers, body } = errorAnswer(e);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
    'OData-Version: 4.01',
    'Connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
