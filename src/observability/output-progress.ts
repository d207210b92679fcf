/** What the log output's thread and the main thread share: how much of what was sent is written. */
export interface OutputWorkerData {
  /** A SharedArrayBuffer of PROGRESS_SLOTS 64-bit counters. */
  readonly progress: SharedArrayBuffer;
  readonly fd: number;
}

export const CHUNKS_DONE = 0;
export const CHARS_DONE = 1;
export const PROGRESS_SLOTS = 2;
