/**
 * Benchmark servers stop by themselves once the runner that started them is gone, even if it was killed
 * with SIGKILL and could not stop them: the runner passes its pid in BENCH_PARENT_PID.
 */
export function exitWithParent(): void {
  const parent = Number(process.env.BENCH_PARENT_PID);
  if (!Number.isInteger(parent) || parent <= 0) return;
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      process.exit(0);
    }
  }, 1000).unref();
}
