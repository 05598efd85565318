// The verifier's record-fidelity checks (docs/ledger.md, invariant 8), on real exports whose
// records are changed and re-signed as a dishonest log would: each check catches its case.
import { ERROR_KINDS, type LedgerRecord, type Outcome } from '@callgate/protocol';
import { testEngine } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { executeStep } from '../../gate/execute-step.js';
import { putPolicyDocument } from '../export.js';
import { FidelityChecks } from './fidelity.js';
import { Findings } from './report.js';
import { verifyBundle } from './verify-bundle.js';

/** A run's records, rewritten by `change`, appended to a fresh log and exported signed. */
async function forged(change: (records: LedgerRecord[]) => Array<Record<string, unknown>>) {
  const source = await testEngine();
  await executeStep(
    source.engine,
    source.runId,
    [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }],
    () => 'text',
  );
  await source.engine.endRun(source.runId);
  const records = (await source.engine.exportRun(source.runId)).records as LedgerRecord[];
  const target = await testEngine();
  const runId = target.runId;
  await putPolicyDocument(target.store, source.engine.policy.document);
  // Rewrite the source run's bodies into the target's (already started) run.
  for (const record of change(records).slice(1)) {
    const { v: _v, seq: _seq, run_id: _run, run_seq: _runSeq, ts: _ts, prev: _prev, ...body } = record;
    await target.ledger.append(runId, body as never);
  }
  const bundle = await target.engine.exportRun(runId);
  return verifyBundle(bundle, { publicKey: target.signer.verifierKey, strict: true });
}

const checks = (report: ReturnType<typeof verifyBundle>) => report.failures.map((failure) => failure.check);

describe('verify --strict: record fidelity', () => {
  it('accepts an honest run, whose bundle has no unsigned field (its manifest signs them)', async () => {
    const report = await forged((records) => records);
    expect(report.failures).toEqual([]);
    expect(report.unsigned).toEqual([]);
  });

  it('fails an allowed call with no call-end', async () => {
    const report = await forged((records) => records.filter((record) => record.type !== 'call-end'));
    expect(checks(report)).toContain('call-end');
  });

  it('fails a call with two call-ends', async () => {
    const report = await forged((records) =>
      records.flatMap((record) => (record.type === 'call-end' ? [record, record] : [record])),
    );
    expect(checks(report)).toContain('call-end');
  });

  it('fails an outcome claiming it ran under a refused grant: the refusal already ended the call', async () => {
    const report = await forged((records) =>
      records.flatMap((record) =>
        record.type === 'call-end'
          ? [
              {
                ...record,
                outcome: 'denied',
                error_kind: 'grant-invalid',
                grant_consumed: false,
                result_commitment: null,
              } as LedgerRecord,
              { ...record, grant_consumed: true },
            ]
          : [record],
      ),
    );
    expect(checks(report)).toContain('call-end');
  });

  it('fails a call that did not run but claims its grant', async () => {
    const report = await forged((records) =>
      records.map((record) =>
        record.type === 'call-end'
          ? ({ ...record, outcome: 'denied', grant_consumed: true } as LedgerRecord)
          : record,
      ),
    );
    expect(checks(report)).toContain('grant');
  });

  it('holds each call-end to the outcome table the gate holds reports to (generated)', async () => {
    const outcomes: Outcome[] = ['ok', 'error', 'denied', 'decided-not-completed', 'changed-after-decision'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...outcomes),
        fc.option(fc.constantFrom(...ERROR_KINDS), { nil: undefined }),
        async (outcome, kind) => {
          // What the gate says of this report for an allowed call...
          const gate = await testEngine();
          await gate.engine.decide(gate.runId, [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }]);
          const gateAccepts = await gate.engine
            .recordOutcome(gate.runId, { call_id: 'c1', outcome, ...(kind ? { error_kind: kind } : {}) })
            .then(
              () => true,
              () => false,
            );
          await gate.engine.close();
          // ...is what verify --strict says of a log that recorded it anyway.
          const report = await forged((records) =>
            records.map((record) => {
              if (record.type !== 'call-end') return record;
              const { error_kind: _kind, ...rest } = record;
              return {
                ...rest,
                outcome,
                grant_consumed: outcome === 'ok' || outcome === 'error',
                ...(kind ? { error_kind: kind } : {}),
              } as LedgerRecord;
            }),
          );
          expect({ outcome, kind, verifierAccepts: !checks(report).includes('call-end') }).toEqual({
            outcome,
            kind,
            verifierAccepts: gateAccepts,
          });
        },
      ),
      { numRuns: 40, seed: 2026_1203 },
    );
  }, 120_000);
});

describe('FidelityChecks.finish: attempts without a call-end', () => {
  const decision = (seq: number, call: string, effect: string, error_kind?: string) =>
    ({
      v: 2,
      type: 'call-decision',
      seq,
      run_id: 'r',
      call_id: call,
      attempt: seq,
      tool: 't',
      effect,
      ...(error_kind === undefined ? {} : { error_kind }),
      arguments_digest: null,
    }) as unknown as LedgerRecord;
  const unended = (strict: boolean, runEnded: boolean) => {
    const findings = new Findings();
    const checks = new FidelityChecks(strict, findings);
    for (const record of [
      decision(1, 'c1', 'allow'),
      decision(2, 'c2', 'ask'),
      decision(3, 'c3', 'deny'),
      decision(4, 'c4', 'allow', 'policy-error'),
    ])
      checks.record(record);
    if (runEnded) checks.record({ v: 2, type: 'run-end', seq: 5, run_id: 'r' } as unknown as LedgerRecord);
    checks.finish();
    return findings;
  };

  it('names each attempt, how it stood and whether its run ended; a warning says --strict fails it', () => {
    expect(unended(false, false).warnings).toEqual([
      'call c1 attempt 1 was allowed but has no call-end (--strict makes this a failure)',
    ]);
    expect(unended(false, true).warnings).toEqual([
      'call c1 attempt 1 was allowed but has no call-end (--strict makes this a failure)',
      'call c2 attempt 2 was asked but has no call-end, though its run ended (--strict makes this a failure)',
      'call c3 attempt 3 was refused but has no call-end, though its run ended (--strict makes this a failure)',
      'call c4 attempt 4 was allowed but has no call-end, though its run ended (--strict makes this a failure)',
    ]);
    const strict = unended(true, true);
    expect(strict.warnings).toEqual([]);
    expect(strict.failures.map((failure) => [failure.check, failure.seq, failure.message])).toEqual([
      ['call-end', 1, 'call c1 attempt 1 was allowed but has no call-end'],
      ['call-end', 2, 'call c2 attempt 2 was asked but has no call-end, though its run ended'],
      ['call-end', 3, 'call c3 attempt 3 was refused but has no call-end, though its run ended'],
      ['call-end', 4, 'call c4 attempt 4 was allowed but has no call-end, though its run ended'],
    ]);
  });
});
