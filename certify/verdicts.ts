/**
 * What a reso-cert run says, counted and judged as `npm run certify` states it. The certification dictionary must
 * pass every required Web API Core scenario; the shipped dictionary must fail only where the spec says to (501
 * for a field it does not index, and for $skip); the Data Dictionary check's metadata part must find no error.
 */
import { LoggedRequest, loggedRequests, readJson, reportFile, ToolRun } from './tool';

interface Scenario {
  readonly name: string;
  readonly passed: boolean;
  readonly skipped: boolean;
  readonly optional?: boolean;
  readonly outcome?: string;
  readonly assertions?: readonly { readonly passed?: boolean; readonly description: string }[];
}

interface CoreReport {
  readonly resourceReports: readonly { readonly resource: string; readonly scenarios: readonly Scenario[] }[];
}

export interface CoreCounts {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly optionalPassed: number;
  /** Optional scenarios not passed, with why ("[Property] String: endswith(): Not Tested; No records returned …"). */
  readonly optionalOther: readonly string[];
  /** Failed required scenarios, with their failed assertions. */
  readonly failures: readonly string[];
}

export function coreCounts(run: ToolRun): CoreCounts {
  const file = reportFile(run.reports, 'report-detailed.json');
  if (!file) throw new Error(`reso-cert wrote no report-detailed.json (exit ${run.code}):\n${run.output.slice(-2000)}`);
  let passed = 0, failed = 0, skipped = 0, optionalPassed = 0;
  const optionalOther: string[] = [];
  const failures: string[] = [];
  for (const { resource, scenarios } of readJson<CoreReport>(file).resourceReports) {
    for (const s of scenarios) {
      const why = (s.assertions ?? []).filter((a) => !a.passed || s.optional).map((a) => a.description).join(' | ');
      if (s.optional) {
        if (s.outcome === 'Passed') optionalPassed++;
        else optionalOther.push(`[${resource}] ${s.name}: ${s.outcome ?? 'not passed'}; ${why}`);
      } else if (s.skipped) skipped++;
      else if (s.passed) passed++;
      else {
        failed++;
        failures.push(`[${resource}] ${s.name}: ${why}`);
      }
    }
  }
  return { passed, failed, skipped, optionalPassed, optionalOther, failures };
}

/** The spec's refusals: a field not indexed (filter, order) and $skip, each a 501 with its code. */
const SPEC_REFUSALS = new Set(['FieldNotFilterable', 'FieldNotSortable', 'SkipNotSupported']);

function errorCode(r: LoggedRequest): string | undefined {
  try {
    return (JSON.parse(r.body ?? '') as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined; // the log keeps the start of a body only
  }
}

/**
 * For the shipped dictionary: what, if anything, is not one of the spec's refusals. Every failed scenario must have
 * failed on a 501; every 501 must carry one of the spec's codes; nothing else may answer 5xx.
 */
export function unexpectedFailures(run: ToolRun, counts: CoreCounts): string[] {
  const out = counts.failures.filter((f) => !/got 501\b/.test(f)).map((f) => `not a 501: ${f}`);
  for (const r of loggedRequests(run.requests)) {
    if (r.status === undefined || r.status < 500) continue;
    const code = errorCode(r);
    if (r.status !== 501 || !code || !SPEC_REFUSALS.has(code)) out.push(`${r.status} ${code ?? ''} ${r.url}`);
  }
  return out;
}

interface DdStep {
  readonly name: string;
  readonly status: string;
  readonly summary?: string;
}

export interface DdVerdict {
  readonly metadataErrors: number;
  readonly warnings: number;
  /** Steps not passed but the variations check, which needs RESO's online service. */
  readonly failedSteps: readonly string[];
  /** What the variations check said (it cannot run here). */
  readonly variations?: string;
}

/** The Data Dictionary run: its metadata validation's errors, and which of its steps did not pass. */
export function ddVerdict(run: ToolRun): DdVerdict {
  const validation = reportFile(run.reports, 'metadata-validation-report.json');
  const detailed = reportFile(run.reports, 'report-detailed.json');
  if (!validation || !detailed) throw new Error(`reso-cert dd wrote no metadata validation (exit ${run.code}):\n${run.output.slice(-2000)}`);
  const report = readJson<{ errorCount: number; warningCount: number }>(validation);
  const steps = readJson<{ steps?: DdStep[] } | DdStep[]>(detailed);
  const list = Array.isArray(steps) ? steps : steps.steps ?? [];
  const variations = /Check variations: (.*)/.exec(run.output)?.[1]?.trim();
  return {
    metadataErrors: report.errorCount,
    warnings: report.warningCount,
    failedSteps: list.filter((s) => s.status !== 'passed').map((s) => `${s.name}: ${s.summary ?? s.status}`),
    variations,
  };
}
