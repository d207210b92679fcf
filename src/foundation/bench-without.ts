/**
 * A bench knob, not an operator setting: RESO_BENCH_WITHOUT=expansion-cache,scan-threads,… turns performance
 * mechanisms off, each without changing anything else, so that bench/mechanisms.ts can measure what each buys
 * against the same build (docs/benchmarks.md, "Bench knobs"). The record cache has its setting already
 * (RECORD_CACHE_MB=0). Read once, when this module is loaded; a name it does not know stops the process, so a
 * misspelt knob cannot quietly measure a build against itself.
 */
export const MECHANISMS = ['expansion-cache', 'byte-pieces', 'scan-threads', 'log-thread', 'plan-cache'] as const;
export type Mechanism = typeof MECHANISMS[number];

/** The mechanisms a comma-separated list names (empty or unset: none). */
export function mechanismsOff(list: string | undefined): ReadonlySet<Mechanism> {
  const names = (list ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(MECHANISMS as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`RESO_BENCH_WITHOUT: ${unknown.join(', ')} is no mechanism (${MECHANISMS.join(', ')})`);
  return new Set(names as Mechanism[]);
}

const off = mechanismsOff(process.env.RESO_BENCH_WITHOUT);

/** Whether the bench knob turned `mechanism` off in this process. */
export function without(mechanism: Mechanism): boolean {
  return off.has(mechanism);
}
