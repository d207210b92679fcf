/**
 * `reso-server ingest <Resource> <file.ndjson>`: one JSON record per line, upserted by key.
 * Malformed lines (bad JSON, unknown fields, values the dictionary does not allow) are reported with their
 * line numbers. With onError 'skip' (the default) the other lines are written; with 'reject' the file is
 * checked whole first and nothing is written if any line is bad. Lines are written in batches, each one
 * transaction: a record and the listing timestamps it moves are always written together.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { RecordError } from '../storage/record-codec';
import { DELETE_MARK, emptyReport, ingestBatch, IngestItem, IngestReport, IngestTarget, isDeletion } from './ingest';

export interface IngestOptions {
  onError: 'skip' | 'reject';
  /** Lines per transaction. */
  batchSize?: number;
  /** Called with the lines read so far, after each batch (and as the check of 'reject' goes). */
  onProgress?: (lines: number) => void;
}

export interface FileReport extends IngestReport {
  lines: number;
  /** True when onError was 'reject' and bad lines stopped the whole file. */
  rejected: boolean;
}

async function* numberedLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  const rl = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of rl) {
    line++;
    // A UTF-8 byte-order mark (written by some editors and exports) is not part of the first record.
    const text = line === 1 && raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
    if (text.trim()) yield { line, text };
  }
}

function parseLine(line: number, text: string): IngestItem {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (e) {
    throw new RecordError(undefined, `not valid JSON (${(e as Error).message})`);
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new RecordError(undefined, 'must be a JSON object');
  return { line, input: input as Record<string, unknown> };
}

export async function ingestFile(target: IngestTarget, setName: string, path: string, options: IngestOptions): Promise<FileReport> {
  const set = target.model.entitySets.find((s) => s.name === setName || s.pathAliases.includes(setName));
  if (!set) throw new Error(`unknown resource ${setName}; resources: ${target.model.entitySets.map((s) => s.name).join(', ')}`);
  const store = target.stores.store(set);
  const report: FileReport = { ...emptyReport(), lines: 0, rejected: false };

  if (options.onError === 'reject') {
    // Check every line before writing any (timestamps are the service's, so a placeholder stands in).
    for await (const { line, text } of numberedLines(path)) {
      if (++report.lines % 1000 === 0) options.onProgress?.(report.lines);
      try {
        const { input } = parseLine(line, text);
        if (isDeletion(input)) {
          if (input[set.key] === undefined) throw new RecordError(set.key, 'is required');
        } else {
          const { [DELETE_MARK]: _m, ...fields } = input;
          store.encode({ ...fields, ...(set.changeTimestamp ? { [set.changeTimestamp]: '2000-01-01T00:00:00.000Z' } : {}) });
        }
      } catch (e) {
        if (!(e instanceof RecordError)) throw e;
        report.errors.push({ line, message: e.message });
      }
    }
    if (report.errors.length > 0) return { ...report, rejected: true };
    report.lines = 0;
  }

  const size = options.batchSize ?? 500;
  let batch: IngestItem[] = [];
  for await (const { line, text } of numberedLines(path)) {
    report.lines++;
    try {
      batch.push(parseLine(line, text));
    } catch (e) {
      if (!(e instanceof RecordError)) throw e;
      report.errors.push({ line, message: e.message });
    }
    if (batch.length >= size) {
      await ingestBatch(target, set.name, batch, report);
      batch = [];
      options.onProgress?.(report.lines);
    }
  }
  if (batch.length) await ingestBatch(target, set.name, batch, report);
  report.errors.sort((a, b) => a.line - b.line);
  return report;
}
