/**
 * SHA-256 in base64url, the digest every part of the service uses (token hashes, ETags, skiptoken query
 * digests, start-up fingerprints), as one call: node ≥ 20.12's `crypto.hash`, about half the cost of a Hash
 * object for the short inputs hashed on every request.
 */
import { createHash, hash } from 'node:crypto';

type OneShot = (algorithm: string, data: string | Buffer, encoding: 'base64url') => string;
const oneShot = hash as OneShot | undefined;

export function sha256(data: string | Buffer): string {
  return oneShot ? oneShot('sha256', data, 'base64url') : createHash('sha256').update(data).digest('base64url');
}
