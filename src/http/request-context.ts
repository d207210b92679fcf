/**
 * What one request carries through the pipeline (pipeline.ts), typed, in one object: who asked (the client and
 * its licence), in what (the protocol version and the negotiated JSON format), with which options, what it was
 * charged and how it failed. Steps and handlers are given it; the request log reads it when the response has
 * gone. Nothing is left on the request or response objects for another part to read back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Client } from '../auth/clients';
import type { Licence, LicenceSource } from '../auth/licence';
import type { TransactionClass } from '../metering/meter';
import { DEFAULT_FORMAT, JsonFormat, ODataVersion } from './odata/json-format';
import type { QueryOptions } from './query-string';

export const SERVICE_ROOT = '/odata';

/** Counts per transaction class, the request's own class first (spec §8). */
export type Charged = Partial<Record<TransactionClass, number>>;

export class RequestContext {
  /** The authenticated client (none before the bearer check, or on an anonymous server). */
  client?: Client;
  /** The version the response speaks (set for every request before any answer is written). */
  version: ODataVersion = '4.01';
  /** The JSON a data response is written in (negotiated once per data request). */
  format: JsonFormat = DEFAULT_FORMAT;
  /** The query options, parsed once. */
  query: QueryOptions = {};
  charged?: Charged;
  /** What ended the request, when something did (logged with it). */
  error?: unknown;
  /**
   * The request's URL as it came (path and query): Express's routes rewrite `req.url` while they mount, and the
   * log names what the client asked for.
   */
  readonly url: string;
  /** The URL's path, without the query. */
  readonly pathname: string;
  /** The URL's query as the client encoded it, without the `?` ('' when it has none). */
  readonly search: string;
  /** The path from the service root (`/Property('X')`), for requests under it. */
  readonly path: string | undefined;
  /** The socket's byte count when the request came: the response's bytes are what it added (request-log.ts). */
  readonly bytesBefore: number;
  readonly socket: Socket;
  /** When the request came (performance.now()). */
  readonly started = performance.now();
  private licenceOfClient?: Licence;

  constructor(readonly req: IncomingMessage, readonly res: ServerResponse, readonly id: string, private readonly roots: ServiceRoots, private readonly licences: LicenceSource) {
    const url = (this.url = req.url ?? '/');
    const q = url.indexOf('?');
    const pathname = (this.pathname = q < 0 ? url : url.slice(0, q));
    this.search = q < 0 ? '' : url.slice(q + 1);
    this.path = pathname === SERVICE_ROOT ? '/' : pathname.startsWith(`${SERVICE_ROOT}/`) ? pathname.slice(SERVICE_ROOT.length) : undefined;
    this.socket = req.socket;
    this.bytesBefore = req.socket.bytesWritten ?? 0;
  }

  /** The client's licence (the open one on an anonymous server), bound once per client by auth/licence.ts. */
  get licence(): Licence {
    return (this.licenceOfClient ??= this.licences.of(this.client));
  }

  /** The absolute service root for links. */
  get root(): string {
    return this.roots.of(this.req);
  }

  /** The context URL to write: none when the client asked for `metadata=none`. */
  context(url: string): string | undefined {
    return this.format.metadata === 'none' ? undefined : url;
  }
}

/**
 * The service root of an app: BASE_URL, or built from the request's Host. A server is reached under one or a few
 * names, so the last one built is kept (per app, not per process).
 */
export class ServiceRoots {
  private last = { protocol: '', host: '', root: '' };

  constructor(private readonly baseUrl: string | undefined) {}

  of(req: IncomingMessage): string {
    if (this.baseUrl !== undefined) return this.baseUrl;
    // What Express's req.protocol answers with 'trust proxy' off, as it is here (a proxy's scheme comes in through
    // BASE_URL), without its settings lookup on every request.
    const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    const host = req.headers.host ?? 'localhost';
    if (protocol !== this.last.protocol || host !== this.last.host) this.last = { protocol, host, root: `${protocol}://${host}${SERVICE_ROOT}` };
    return this.last.root;
  }
}

/** Begins the context of each of an app's requests (the request pipeline, first thing for every request). */
export class RequestContexts {
  constructor(private readonly roots: ServiceRoots, private readonly licences: LicenceSource) {}

  begin(req: IncomingMessage, res: ServerResponse, id: string): RequestContext {
    return new RequestContext(req, res, id, this.roots, this.licences);
  }
}
