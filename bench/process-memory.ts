/**
 * Resident memory of a server process while a client works it, from /proc/<pid>/status (Linux; NaN elsewhere):
 * VmRSS sampled on a timer for the peak and the end of a measured span, VmHWM for the peak since the process started.
 */
import { readFileSync } from 'node:fs';

function statusField(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Bytes resident now. */
export const rssBytes = (pid: number | undefined): number => statusField(pid, 'VmRSS');
/** The most bytes ever resident at once in the process (the kernel's high-water mark). */
export const peakRssBytes = (pid: number | undefined): number => statusField(pid, 'VmHWM');

export interface RssSpan { start: number; peak: number; end: number }

/** Samples a process's RSS every `everyMs` from now until the returned stop(), which gives start, peak and end. */
export function sampleRss(pid: number | undefined, everyMs = 25): () => RssSpan {
  const start = rssBytes(pid);
  let peak = start;
  const timer = setInterval(() => { peak = Math.max(peak, rssBytes(pid)); }, everyMs);
  return () => {
    clearInterval(timer);
    const end = rssBytes(pid);
    return { start, peak: Math.max(peak, end), end };
  };
}
