/**
 * Requests each client has in progress, against a limit per client: a client holding many slow responses
 * open cannot take the whole server's memory and connections for itself.
 */
export class RequestsInProgress {
  private readonly counts = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Takes a slot for the client; false when it already has `limit` requests in progress. */
  enter(client: string): boolean {
    const n = this.counts.get(client) ?? 0;
    if (n >= this.limit) return false;
    this.counts.set(client, n + 1);
    return true;
  }

  /** Gives a slot back; call exactly once per successful enter. */
  leave(client: string): void {
    const n = (this.counts.get(client) ?? 1) - 1;
    if (n <= 0) this.counts.delete(client);
    else this.counts.set(client, n);
  }

  inProgress(client: string): number {
    return this.counts.get(client) ?? 0;
  }
}
