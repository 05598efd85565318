// The call checks and the fidelity checks sharing one state per decided attempt report exactly
// what each reports keeping its own, over generated record sequences: duplicate decisions, the
// same record object given twice, requests and responses for other attempts, ends with and
// without decisions, several runs.
import type { LedgerRecord } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallAttempts } from './attempts.js';
import { CallChecks } from './calls.js';
import { FidelityChecks } from './fidelity.js';
import { Findings } from './report.js';

const digest = fc.constantFrom(null, `sha256:${'a'.repeat(64)}`, `sha256:${'b'.repeat(64)}`);
const base = { v: 1, ts: 1, prev: null, run_seq: 1 };
const call = fc.record({
  run_id: fc.constantFrom('r1', 'r2'),
  call_id: fc.constantFrom('c1', 'c2', 'c3'),
  attempt: fc.integer({ min: 1, max: 3 }),
  tool: fc.constantFrom('t1', 't2'),
  arguments_digest: digest,
});
const record = fc.oneof(
  fc
    .record({
      call,
      effect: fc.constantFrom('allow', 'deny', 'ask'),
      error_kind: fc.constantFrom(undefined, 'tool-args-invalid'),
    })
    .map(({ call, effect, error_kind }) => ({
      ...base,
      ...call,
      type: 'call-decision',
      effect,
      ...(error_kind === undefined ? {} : { error_kind }),
    })),
  fc.record({ call, approval_id: fc.constantFrom('p1', 'p2') }).map(({ call, approval_id }) => ({
    ...base,
    ...call,
    type: 'approval-request',
    approval_id,
  })),
  fc
    .record({
      call,
      approval_id: fc.constantFrom('p1', 'p2'),
      status: fc.constantFrom('approved', 'denied', 'expired'),
      edited: fc.boolean(),
    })
    .map(({ call, ...rest }) => ({ ...base, ...call, type: 'approval-response', ...rest })),
  fc
    .record({
      call,
      outcome: fc.constantFrom('ok', 'error', 'denied', 'changed-after-decision'),
      grant_consumed: fc.boolean(),
    })
    .map(({ call, ...rest }) => ({ ...base, ...call, type: 'call-end', ...rest })),
  fc.record({ call }).map(({ call }) => ({ ...base, ...call, type: 'effective-arguments' })),
  fc.constantFrom('r1', 'r2').map((run_id) => ({ ...base, run_id, type: 'run-end' })),
);

/** What the two checks report, shared or each with its own state. */
function report(records: readonly LedgerRecord[], strict: boolean, shared: boolean) {
  const attempts = shared ? new CallAttempts() : undefined;
  const calls = new CallChecks(new Findings(), attempts);
  const fidelity = new FidelityChecks(strict, new Findings(), attempts);
  for (const record of records) {
    calls.record(record);
    fidelity.record(record);
  }
  fidelity.finish();
  return { calls: calls.findings, fidelity: fidelity.findings };
}

describe('CallAttempts shared by the call and fidelity checks', () => {
  it('changes no finding of either check', () => {
    fc.assert(
      fc.property(
        fc.array(record, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        (drawn, repeats, strict) => {
          const records = drawn.map((item, seq) => ({ ...item, seq })) as unknown as LedgerRecord[];
          // The same record object given again later (a caller's array may hold one twice).
          for (const at of repeats)
            if (records.length > 0) records.push(records[at % records.length] as LedgerRecord);
          expect(report(records, strict, true)).toEqual(report(records, strict, false));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
