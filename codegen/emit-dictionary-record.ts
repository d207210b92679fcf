/**
 * generated/dictionary.sha256: what generated/ was generated from, as the SHA-256 of the dictionary's bytes and
 * the dictionary's path from the repository root, in sha256sum's format (`sha256sum -c generated/dictionary.sha256`
 * from the root checks it). scripts/freshness.js compares it at every start: a hash, because a git checkout gives
 * every file the same time, and a path, because `generate --dictionary` may have read another file than the default.
 */
import { createHash } from 'node:crypto';
import type { EmittedFile } from './emitted-file';

export const DICTIONARY_RECORD = 'dictionary.sha256';

export interface DictionarySource {
  /** The file's bytes, as read. */
  readonly bytes: Buffer;
  /** Its path from the repository root, with `/` separators. */
  readonly path: string;
}

export function emitDictionaryRecord(source: DictionarySource, header: string): EmittedFile {
  const sha256 = createHash('sha256').update(source.bytes).digest('hex');
  const text = `# ${header}\n# The dictionary generated/ was generated from: npm start compares it (scripts/freshness.js).\n${sha256}  ${source.path}\n`;
  return { path: DICTIONARY_RECORD, text };
}
