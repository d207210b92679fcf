/**
 * A client that asks for a response and then stops reading it (a paused raw socket), and what a server
 * process holds meanwhile (/proc/<pid>: resident memory, CPU time).
 */
import { readFileSync } from 'node:fs';
import { connect, Socket } from 'node:net';

export interface StalledReader {
  readonly socket: Socket;
  /** The status line, once the first bytes came (then the socket stops reading). */
  readonly statusLine: Promise<string>;
  /**
   * Whether the server has closed its end of the connection, seen without reading: the server's socket (the
   * one whose peer is this socket) is no longer ESTABLISHED. Its FIN waits behind the data the client has not
   * taken, so the client's own socket cannot tell yet.
   */
  peerClosed(): boolean;
  /** Reads on until the server closes; resolves with every byte received. */
  drain(): Promise<Buffer>;
  close(): void;
}

/** GET `url` over a socket of its own with `token`, reading only the first bytes of the answer. */
export function stalledReader(url: string, token: string, headers: Record<string, string> = {}): StalledReader {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  // Connection: close, so that a response read to its end ends the connection too.
  const lines = [`GET ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, `Authorization: Bearer ${token}`, 'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  const received: Buffer[] = [];
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined); // a reset by the server is what some tests wait for
  const statusLine = new Promise<string>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      received.push(chunk);
      resolve(chunk.toString('latin1').split('\r\n')[0]);
    });
    socket.once('close', () => reject(new Error(`connection closed before any answer to ${url}`)));
  });
  statusLine.catch(() => undefined);
  return {
    socket,
    statusLine,
    async drain() {
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.resume();
      await closed;
      return Buffer.concat(received);
    },
    peerClosed: () => stateOfPeer(socket.localPort!) !== ESTABLISHED,
    close: () => socket.destroy(),
  };
}

const ESTABLISHED = '01';

/** The kernel's TCP state (hex, as /proc/net/tcp writes it) of the socket whose peer is on `port`; undefined if gone. */
function stateOfPeer(port: number): string | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, , remote, state] = line.trim().split(/\s+/);
      if (remote?.endsWith(`:${hex}`)) return state;
    }
  }
  return undefined;
}

/** Resident memory of a process, in MiB. */
export function residentMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb[1]) / 1024;
}

/** CPU time a process has used so far, in clock ticks (user + system). */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Samples a process's resident memory every `everyMs` until its CPU time has not moved for `quietMs` (it has
 * done all it can for now) or `maxMs` passed; resolves with the highest sample.
 */
export async function peakUntilQuiet(pid: number, options: { everyMs: number; quietMs: number; maxMs: number }): Promise<number> {
  let peak = residentMiB(pid);
  let ticks = cpuTicks(pid);
  let quietSince = Date.now();
  const start = Date.now();
  while (Date.now() - start < options.maxMs && Date.now() - quietSince < options.quietMs) {
    await new Promise((resolve) => setTimeout(resolve, options.everyMs));
    peak = Math.max(peak, residentMiB(pid));
    const now = cpuTicks(pid);
    if (now !== ticks) quietSince = Date.now();
    ticks = now;
  }
  return peak;
}
