/** A clock that moves only when a test moves it: expiries and windows without waiting for them. */
import type { Clock } from '../../src/foundation/clock';

export class ManualClock implements Clock {
  constructor(private at = Date.now()) {}

  now(): number {
    return this.at;
  }

  advance(ms: number): void {
    this.at += ms;
  }
}
