/**
 * Progress of a long command (seed, ingest) on stderr, so that stdout keeps only the result: on a terminal one
 * line rewritten in place at most every 200 ms, elsewhere (a log, a pipe) a line at most every 5 s; each with the
 * count, the rate and, when the total is known, the share done and the time left. Bounded: a run of any length
 * writes at most one line per interval.
 */
export interface ProgressSink {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export class Progress {
  private readonly started: number;
  private last = -Infinity;
  private shown = false;

  constructor(
    private readonly what: string,
    private readonly total: number | undefined,
    private readonly out: ProgressSink = process.stderr,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.started = now();
  }

  private get interval(): number {
    return this.out.isTTY ? 200 : 5000;
  }

  /** `done` so far; shown when the interval has passed. */
  update(done: number): void {
    const at = this.now();
    if (at - this.last < this.interval) return;
    this.last = at;
    this.show(done, at);
  }

  /** The last figure, then the line ends (a terminal's in-place line is kept). */
  finish(done: number): void {
    if (!this.shown && this.now() - this.started < this.interval) return;
    this.show(done, this.now());
    if (this.out.isTTY) this.out.write('\n');
  }

  private show(done: number, at: number): void {
    const seconds = Math.max((at - this.started) / 1000, 0.001);
    const rate = done / seconds;
    let line = `${this.what}: ${done.toLocaleString('en-US')}`;
    if (this.total !== undefined && this.total > 0) {
      const left = rate > 0 ? Math.ceil((this.total - done) / rate) : undefined;
      line += `/${this.total.toLocaleString('en-US')} (${Math.floor((100 * done) / this.total)}%)`;
      line += `, ${Math.round(rate).toLocaleString('en-US')}/s${left === undefined ? '' : `, ${left} s left`}`;
    } else {
      line += `, ${Math.round(rate).toLocaleString('en-US')}/s, ${seconds.toFixed(0)} s`;
    }
    this.shown = true;
    this.out.write(this.out.isTTY ? `\r${line}\u001b[K` : `${line}\n`);
  }
}
