/** CPU time (user + system) from /proc/<pid>/stat; NaN when it cannot be read. */
import { readFileSync } from 'node:fs';

/** Two fields of /proc/<pid>/stat counted from after the command's closing parenthesis, in seconds. */
function statSeconds(pid: number | 'self' | undefined, first: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[first]) + Number(fields[first + 1])) / 100; // clock ticks (USER_HZ = 100)
  } catch {
    return NaN;
  }
}

/** What a process has used so far (utime + stime). */
export function cpuSeconds(pid: number | undefined): number {
  return statSeconds(pid, 11);
}

/**
 * What this process's children that have ended and been waited for used (cutime + cstime): read around a child's
 * run, the difference is that child's (children still running are not in it).
 */
export function endedChildrenCpuSeconds(): number {
  return statSeconds('self', 13);
}
