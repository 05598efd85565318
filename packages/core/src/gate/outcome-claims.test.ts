// An outcome claiming a grant the gate did not consume is refused and leaves a refusal record
// (docs/ledger.md, invariants 2 and 3), whatever state its call is in: never consumed, refused,
// waiting on an approval, denied by a person, ended by a failed consume or by the agent's own
// `denied`. Generated over those states, the outcome claimed and how often it is claimed; the
// honest claim (after a consume) is accepted and leaves none.
import { ERROR_KINDS, type ErrorKind, type LedgerRecord, type Outcome } from '@callgate/protocol';
import { testEngine } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

type State =
  | 'allowed-unconsumed'
  | 'refused'
  | 'ask-pending'
  | 'ask-denied'
  | 'consume-refused'
  | 'ended-denied'
  | 'consumed';

const STATES: State[] = [
  'allowed-unconsumed',
  'refused',
  'ask-pending',
  'ask-denied',
  'consume-refused',
  'ended-denied',
  'consumed',
];

/** A run holding call `c1` in `state`. */
async function callIn(state: State) {
  const made = await testEngine();
  const { engine, runId } = made;
  const call =
    state === 'refused'
      ? { id: 'c1', tool: 'format_disk', arguments: {} }
      : state === 'ask-pending' || state === 'ask-denied'
        ? { id: 'c1', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }
        : { id: 'c1', tool: 'read_file', arguments: { path: 'a' } };
  const [verdict] = await engine.decide(runId, [call], { issueGrants: true });
  if (state === 'ask-denied')
    await engine.respondToApproval(verdict?.approval?.id as string, { approved: false, reviewer: 'rita' });
  const binding = (digest: string) => ({
    run_id: runId,
    call_id: 'c1',
    tool: call.tool,
    arguments_digest: digest,
  });
  if (state === 'consume-refused')
    await expect(
      engine.consumeGrant(verdict?.grant?.token as string, binding('sha256:00')),
    ).rejects.toMatchObject({ kind: 'grant-invalid' });
  if (state === 'consumed')
    await engine.consumeGrant(verdict?.grant?.token as string, binding(verdict?.arguments_digest as string));
  if (state === 'ended-denied') await engine.recordOutcome(runId, { call_id: 'c1', outcome: 'denied' });
  return made;
}

async function claimsOf(engine: Awaited<ReturnType<typeof testEngine>>['engine'], runId: string) {
  const records = (await engine.exportRun(runId)).records as LedgerRecord[];
  return {
    refusals: records.filter(
      (record) => record.type === 'refusal' && record.kind === 'outcome-contradicts-grant',
    ),
    claimedEnds: records.filter((record) => record.type === 'call-end' && record.grant_consumed),
  };
}

describe('outcomes claiming a grant', () => {
  it('are refused and recorded unless the gate consumed the grant, in every state of the call', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...STATES),
        fc.constantFrom('ok' as const, 'error' as const),
        fc.integer({ min: 1, max: 3 }),
        async (state, outcome, claims) => {
          const { engine, runId } = await callIn(state);
          const results: unknown[] = [];
          for (let index = 0; index < claims; index++) {
            results.push(
              await engine
                .recordOutcome(runId, { call_id: 'c1', outcome, grant_consumed: true, result: { index } })
                .then(
                  (recorded) => recorded,
                  (error: { kind?: string }) => ({ refused: error.kind }),
                ),
            );
          }
          const { refusals, claimedEnds } = await claimsOf(engine, runId);
          if (state === 'consumed') {
            // The first claim is the call's outcome; repeating it is a conflict, not a contradiction.
            expect(results[0]).toBe(outcome);
            expect(results.slice(1)).toEqual(Array(claims - 1).fill({ refused: 'conflict' }));
            expect(refusals).toEqual([]);
            expect(claimedEnds).toHaveLength(1);
          } else {
            for (const result of results) expect(result).toMatchObject({ refused: expect.any(String) });
            expect(refusals).toHaveLength(claims);
            for (const refusal of refusals) expect(refusal).toMatchObject({ call_id: 'c1' });
            expect(claimedEnds).toEqual([]);
          }
          await engine.close();
        },
      ),
      { numRuns: 40, seed: 2026_12 },
    );
  });

  // Which (outcome, error kind) each standing of a call may end with, written out here from
  // docs/ledger.md ("What an outcome may claim") apart from the gate's table.
  type Standing =
    | 'allowed'
    | 'approved'
    | 'policy-denied'
    | 'args-invalid'
    | 'unknown-tool'
    | 'ask-pending'
    | 'ask-denied';
  const STANDINGS: Standing[] = [
    'allowed',
    'approved',
    'policy-denied',
    'args-invalid',
    'unknown-tool',
    'ask-pending',
    'ask-denied',
  ];
  const OUTCOMES: Outcome[] = ['ok', 'error', 'denied', 'decided-not-completed', 'changed-after-decision'];
  const PERSON_OR_POLICY: ErrorKind[] = [
    'policy-denied',
    'approval-denied',
    'approval-pending',
    'approval-expired',
  ];
  function accepted(standing: Standing, outcome: Outcome, kind: ErrorKind | undefined): boolean {
    if (standing === 'allowed' || standing === 'approved')
      return outcome === 'ok' ? kind === undefined : kind === undefined || !PERSON_OR_POLICY.includes(kind);
    if (outcome !== 'denied') return false;
    const mayCarry: Record<Exclude<Standing, 'allowed' | 'approved'>, ErrorKind[]> = {
      'policy-denied': ['policy-denied'],
      'args-invalid': ['tool-args-invalid'],
      'unknown-tool': ['tool-not-found'],
      // The approval's kinds, or the client's own reason not to run it (never a decision's).
      'ask-pending': [...ERROR_KINDS].filter(
        (kind) => kind !== 'policy-denied' && kind !== 'approval-denied',
      ),
      'ask-denied': ['approval-denied'],
    };
    return kind === undefined || mayCarry[standing].includes(kind);
  }

  it('are held to what the call’s decision allows them to claim, and a contradiction is recorded (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...STANDINGS),
        fc.constantFrom(...OUTCOMES),
        fc.option(fc.constantFrom(...ERROR_KINDS), { nil: undefined }),
        async (standing, outcome, kind) => {
          const made = await testEngine();
          const { engine, runId } = made;
          const call = {
            allowed: { tool: 'read_file', arguments: { path: 'a' } },
            approved: { tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } },
            'policy-denied': { tool: 'delete_file', arguments: { path: 'a' } },
            'args-invalid': { tool: 'read_file', arguments: { path: 5 } },
            'unknown-tool': { tool: 'format_disk', arguments: {} },
            'ask-pending': { tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } },
            'ask-denied': { tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } },
          }[standing];
          const [verdict] = await engine.decide(runId, [{ id: 'c1', ...call }]);
          if (standing === 'approved' || standing === 'ask-denied')
            await engine.respondToApproval(verdict?.approval?.id as string, {
              approved: standing === 'approved',
              reviewer: 'rita',
            });
          const answer = await engine
            .recordOutcome(runId, { call_id: 'c1', outcome, ...(kind ? { error_kind: kind } : {}) })
            .then(
              (recorded) => ({ recorded }),
              (error: { kind?: string; message?: string }) => ({
                refused: error.kind,
                message: error.message,
              }),
            );
          const records = (await engine.exportRun(runId)).records as LedgerRecord[];
          const refusals = records.filter(
            (record) => record.type === 'refusal' && record.kind === 'outcome-contradicts-grant',
          );
          const ends = records.filter((record) => record.type === 'call-end');
          if (accepted(standing, outcome, kind)) {
            expect(answer).not.toHaveProperty('refused');
            expect(refusals).toEqual([]);
            expect(ends).toHaveLength(1);
            expect(ends[0]).toMatchObject(kind ? { error_kind: kind } : {});
          } else {
            expect(answer).toMatchObject({ refused: 'conflict' });
            expect(refusals).toHaveLength(1);
            expect(refusals[0]).toMatchObject({ call_id: 'c1', tool: call.tool });
            expect(ends).toEqual([]);
          }
          await engine.close();
        },
      ),
      { numRuns: 150, seed: 2026_1203 },
    );
  }, 120_000);
});
