/**
 * A TCP proxy in front of the database that a test can cut and restore, to make the database unreachable for
 * real, or stall: connections stay open (and new ones are accepted) but no byte goes either way, as when the
 * server process is stopped or a network path goes dark.
 */
import { createServer, Server, Socket, connect } from 'node:net';

interface Link { readonly client: Socket; readonly upstream: Socket }

/** A proxy started in front of the MariaDB/MySQL database `url` names, and the same URL through it. */
export async function proxiedDatabase(url: string): Promise<{ proxy: TcpProxy; url: string }> {
  const u = new URL(url);
  const proxy = new TcpProxy(u.hostname, Number(u.port || 3306));
  await proxy.start();
  u.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: u.toString() };
}

export class TcpProxy {
  private server?: Server;
  private readonly links = new Set<Link>();
  private stalled = false;
  port = 0;

  constructor(private readonly targetHost: string, private readonly targetPort: number) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      const link = { client, upstream };
      this.links.add(link);
      for (const s of [client, upstream]) {
        s.on('close', () => { this.links.delete(link); client.destroy(); upstream.destroy(); });
        s.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      if (!this.stalled) forward(link);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Refuses new connections and drops every open one. */
  async stop(): Promise<void> {
    for (const { client, upstream } of this.links) { client.destroy(); upstream.destroy(); }
    this.links.clear();
    this.stalled = false;
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Stops forwarding: open connections and new ones stay up, and what is sent waits (the database hangs). */
  stall(): void {
    if (this.stalled) return;
    this.stalled = true;
    for (const link of this.links) {
      link.client.unpipe(link.upstream);
      link.upstream.unpipe(link.client);
      link.client.pause();
      link.upstream.pause();
    }
  }

  /** Forwards again, what waited first. */
  resume(): void {
    if (!this.stalled) return;
    this.stalled = false;
    for (const link of this.links) forward(link);
  }
}

function forward({ client, upstream }: Link): void {
  client.pipe(upstream);
  upstream.pipe(client);
}
