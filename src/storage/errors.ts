/** The database cannot answer right now (down, unreachable, locked); the request may be retried. */
export class DatabaseUnavailable extends Error {
  constructor(readonly reason: string, readonly cause?: unknown) {
    super(`database unavailable (${reason})`);
  }
}
