/** A row of the outside-in benches' latency tables: label, samples, p50, p99 and max, in ms. */

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

export function latencyRow(label: string, xs: readonly number[]): string {
  return `| ${label} | ${xs.length} | ${quantile(xs, 0.5).toFixed(1)} | ${quantile(xs, 0.99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`;
}
