/**
 * `npm run certify` judges reso-cert's reports (certify/verdicts.ts): here on reports written as the tool writes
 * them (its nested folders, report-detailed.json, the request log of fetch-log.mjs), so that a verdict CI trusts
 * cannot pass what it should refuse. The runs against the real tool are `npm run certify` itself (in CI).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { ToolRun } from '../certify/tool';
import { coreCounts, ddVerdict, unexpectedFailures } from '../certify/verdicts';

const scenario = (name: string, outcome: Partial<{ passed: boolean; skipped: boolean; optional: boolean; outcome: string; why: string }>) => ({
  name, tag: name, passed: outcome.passed ?? false, skipped: outcome.skipped ?? false, optional: outcome.optional, outcome: outcome.outcome,
  assertions: [{ passed: outcome.passed ?? false, description: outcome.why ?? '' }],
});

const refusal = (code: string) => JSON.stringify({ error: { code, message: '…', target: 'X', details: [] } });

describe('npm run certify: the verdicts on reso-cert\'s reports', () => {
  let dir: string;
  /** A run whose reports are `scenarios` (under the tool's nesting) and whose request log is `requests`. */
  const run = (scenarios: object[], requests: object[]): ToolRun => {
    const out = mkdtempSync(join(dir, 'run-'));
    const nested = join(out, 'web-api-core-2.1.0', 'LOCAL-1-LOCAL-SYSTEM', 'LOCAL-RECIPIENT', 'current');
    mkdirSync(nested, { recursive: true });
    writeFileSync(join(nested, 'report-detailed.json'), JSON.stringify({ resourceReports: [{ resource: 'Property', scenarios }] }));
    writeFileSync(join(out, 'requests.jsonl'), requests.map((r) => JSON.stringify(r)).join('\n'));
    return { code: 1, output: '', reports: out, requests: join(out, 'requests.jsonl') };
  };

  before(() => { dir = mkdtempSync(join(tmpdir(), 'reso-verdicts-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('counts required scenarios passed, failed and skipped, and optional ones apart, with why they did not pass', () => {
    const counts = coreCounts(run([
      scenario('Integer: eq', { passed: true }),
      scenario('Decimal: gt', { why: 'Expected HTTP 200, got 501 — AboveGradeFinishedArea cannot be filtered on' }),
      scenario('Single enum: has', { passed: true, skipped: true }),
      scenario('String: endswith()', { optional: true, outcome: 'Not Tested', passed: true, skipped: true, why: 'No records returned' }),
      scenario('String: contains()', { optional: true, outcome: 'Passed', passed: true }),
    ], []));
    expect([counts.passed, counts.failed, counts.skipped, counts.optionalPassed]).to.deep.equal([1, 1, 1, 1]);
    expect(counts.failures).to.deep.equal(['[Property] Decimal: gt: Expected HTTP 200, got 501 — AboveGradeFinishedArea cannot be filtered on']);
    expect(counts.optionalOther).to.deep.equal(['[Property] String: endswith(): Not Tested; No records returned']);
  });

  it("accepts the shipped dictionary's failures only when each is a 501 and every 501 is the spec's (not indexed, $skip)", () => {
    const failed = [scenario('Decimal: gt', { why: 'Expected HTTP 200, got 501 — not indexed' }), scenario('$skip', { why: 'Expected HTTP 200, got 501 — $skip' })];
    const spec = [{ url: 'u1', status: 501, body: refusal('FieldNotFilterable') }, { url: 'u2', status: 501, body: refusal('SkipNotSupported') }, { url: 'u3', status: 400, body: refusal('FieldNotFound') }];
    const ok = run(failed, spec);
    expect(unexpectedFailures(ok, coreCounts(ok))).to.deep.equal([]);
    const other501 = run(failed, [...spec, { url: 'u4', status: 501, body: refusal('FunctionNotSupported') }]);
    expect(unexpectedFailures(other501, coreCounts(other501))).to.deep.equal(['501 FunctionNotSupported u4']);
    const crashed = run([...failed, scenario('Date: eq', { why: 'Expected HTTP 200, got 500' })], [...spec, { url: 'u5', status: 500, body: refusal('InternalError') }]);
    expect(unexpectedFailures(crashed, coreCounts(crashed))).to.deep.equal(['not a 501: [Property] Date: eq: Expected HTTP 200, got 500', '500 InternalError u5']);
  });

  it('reads the Data Dictionary check: its metadata errors, its steps not passed, and what the variations step said', () => {
    const out = mkdtempSync(join(dir, 'dd-'));
    const nested = join(out, 'data-dictionary-2.0', 'LOCAL-1-LOCAL-SYSTEM', 'LOCAL-RECIPIENT', 'current');
    mkdirSync(nested, { recursive: true });
    writeFileSync(join(nested, 'metadata-validation-report.json'), JSON.stringify({ errorCount: 2, warningCount: 136, findings: [] }));
    writeFileSync(join(nested, 'report-detailed.json'), JSON.stringify([{ name: 'Service check', status: 'passed' }, { name: 'Validate DD metadata', status: 'failed', summary: '2 errors' }]));
    const v = ddVerdict({ code: 1, output: '  ✗ Check variations: Variations Service: RESO_SERVICES_URL is not set.\n', reports: out, requests: '' });
    expect(v).to.deep.equal({ metadataErrors: 2, warnings: 136, failedSteps: ['Validate DD metadata: 2 errors'], variations: 'Variations Service: RESO_SERVICES_URL is not set.' });
  });
});
