/**
 * `reso-server ingest <Resource> <file.ndjson>`: one JSON record per line, upserted by key.
 * Bad lines (not JSON, not an object, or a record its set's schema refuses: unknown fields, values the dictionary
 * does not allow) are reported with their line numbers and every problem. With onError 'skip' (the default) the
 * other lines are written; with 'reject' the file is checked whole first (the schema, the codec and, in
 * transactions rolled back, the database) and nothing is written if any line is bad. Lines are written in
 * batches, each one transaction: a record and the listing timestamps it moves are always written together.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { emptyReport, entitySetOf, ingestBatch, IngestItem, IngestReport, IngestTarget, LineReport } from './ingest';

export interface IngestOptions {
  onError: 'skip' | 'reject';
  /** Lines per transaction. */
  batchSize?: number;
  /** How long each batch may keep losing conflicts with other writers before it is split (ingest.ts BatchOptions). */
  conflictBudgetMs?: number;
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

/** The line's object, or what is wrong with it. */
function parseLine(line: number, text: string): IngestItem | LineReport {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (e) {
    return { line, message: `not valid JSON (${(e as Error).message})` };
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) return { line, message: 'must be a JSON object' };
  return { line, input: input as Record<string, unknown> };
}

/** Reads the file in batches of parsed lines, reporting the lines that do not parse; `each` gets every batch. */
async function inBatches(path: string, size: number, report: FileReport, each: (batch: IngestItem[]) => Promise<void>): Promise<void> {
  let batch: IngestItem[] = [];
  for await (const { line, text } of numberedLines(path)) {
    report.lines++;
    const parsed = parseLine(line, text);
    if ('input' in parsed) batch.push(parsed);
    else report.errors.push(parsed);
    if (batch.length >= size) {
      await each(batch);
      batch = [];
    }
  }
  if (batch.length) await each(batch);
}

export async function ingestFile(target: IngestTarget, setName: string, path: string, options: IngestOptions): Promise<FileReport> {
  const set = entitySetOf(target.model, setName);
  const size = options.batchSize ?? 500;
  const report: FileReport = { ...emptyReport(), lines: 0, rejected: false };

  if (options.onError === 'reject') {
    // Every batch as it would be written, rolled back: only the errors are kept.
    await inBatches(path, size, report, async (batch) => {
      await ingestBatch(target, set.name, batch, report, 'trial', { conflictBudgetMs: options.conflictBudgetMs });
      options.onProgress?.(report.lines);
    });
    if (report.errors.length > 0) return { ...report, errors: sorted(report.errors), rejected: true };
    report.lines = 0;
  }

  await inBatches(path, size, report, async (batch) => {
    await ingestBatch(target, set.name, batch, report, 'write', { conflictBudgetMs: options.conflictBudgetMs });
    options.onProgress?.(report.lines);
  });
  return { ...report, errors: sorted(report.errors), notices: sorted(report.notices) };
}

function sorted(lines: readonly LineReport[]): LineReport[] {
  return [...lines].sort((a, b) => a.line - b.line);
}
