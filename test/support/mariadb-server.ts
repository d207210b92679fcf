/**
 * What the tests that run MariaDB servers of their own share (support/galera.ts, support/replica-pair.ts): the
 * server binary, a new data folder, and who owns it. As root the server runs as mysql, and so does what it runs
 * (rsync's state transfer): the folders it writes must be that user's.
 */
import { execFileSync } from 'node:child_process';
import { chownSync } from 'node:fs';

export const MARIADBD = '/usr/sbin/mariadbd';
export const INSTALL_DB = '/usr/bin/mariadb-install-db';

/** The server's `--user` option: as root, mysql; otherwise the server runs as whoever starts it. */
export function serverUser(): string[] {
  return process.getuid?.() === 0 ? ['--user=mysql'] : [];
}

/** Hands `path` to the user the server runs as (nothing to do unless the tests run as root). */
export function ownedByServer(path: string): void {
  if (process.getuid?.() !== 0) return;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'mysql']).toString().trim());
  chownSync(path, id('-u'), id('-g'));
}

/** A new data folder with the system tables, root without a password, owned by the server's user. */
export function installDatabase(folder: string): void {
  ownedByServer(folder);
  execFileSync(INSTALL_DB, ['--no-defaults', `--datadir=${folder}`, ...serverUser(), '--auth-root-authentication-method=normal', '--skip-test-db'], { stdio: 'ignore' });
  ownedByServer(folder);
}
