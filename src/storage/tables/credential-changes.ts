/**
 * A mark in the settings table that changes whenever a client is revoked or rotated, so that every
 * instance on the database learns it has to forget the token lookups it cached (auth/clients.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database';
import type { Settings } from './settings';

const MARK = 'credentials-changed';

/** What the client registry asks of the database about changes other processes made. */
export interface CredentialChanges {
  /** The current mark (undefined until the first change). */
  current(): Promise<string | undefined>;
  /** Moves the mark: every instance drops its cached token lookups at its next look. */
  announce(): Promise<void>;
}

export class CredentialMark implements CredentialChanges {
  constructor(private readonly db: Database, private readonly settings: Settings) {}

  current(): Promise<string | undefined> {
    return this.settings.get(MARK);
  }

  async announce(): Promise<void> {
    // A fresh random value, not a counter: two changes at once still leave a value no instance has seen.
    await this.db.transaction((tx) => this.settings.set(tx, MARK, randomBytes(9).toString('base64url')));
  }
}
