/**
 * Reads the Prometheus text exposition format (version 0.0.4) strictly enough to fail on a malformed line:
 * every line is a comment (# HELP / # TYPE) or `name{label="value",…} number`.
 */
export interface Sample { readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly value: number }

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|[Nn]a[Nn]|[+-]Inf)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < m[2].length) {
        const l = LABEL.exec(m[2]);
        if (!l) throw new Error(`malformed labels in: ${line}`);
        labels[l[1]] = l[2];
      }
    }
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : /nan/i.test(m[3]) ? NaN : Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample with that name and exactly those labels; -1 when there is none. */
export function sample(samples: readonly Sample[], name: string, labels: Readonly<Record<string, string>>): number {
  const want = JSON.stringify(Object.entries(labels).sort());
  const found = samples.filter((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${want}`);
  return found[0]?.value ?? -1;
}
