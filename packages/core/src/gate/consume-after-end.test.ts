// A grant is for a call that has not ended (docs/ledger.md, invariants 1–3): once its call has a
// `call-end` — whatever the agent reported (`ok` without the grant, `error`, `denied`,
// `decided-not-completed`) — the grant can no longer be consumed, so no tool that checks grants
// runs a call the ledger says was denied or not run. Each such consume is refused
// `grant-invalid` and leaves a `refusal` record; the call keeps its one `call-end`. Generated over
// the decision (allowed, or asked and approved), the outcome reported, the consume path (by token,
// or the gateway's outstanding-grant lookup) and how often it is tried; consuming before the end
// still works.
import type { LedgerRecord } from '@callgate/protocol';
import { testEngine } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const OUTCOMES = ['ok', 'error', 'denied', 'decided-not-completed'] as const;

describe('a grant whose call has ended', () => {
  it('is never consumed, and every try is a refusal record', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('allowed' as const, 'approved' as const),
        fc.constantFrom(...OUTCOMES),
        fc.constantFrom('token' as const, 'outstanding' as const),
        fc.integer({ min: 1, max: 3 }),
        async (decision, outcome, path, tries) => {
          const { engine, runId } = await testEngine();
          const call =
            decision === 'approved'
              ? { id: 'c1', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }
              : { id: 'c1', tool: 'read_file', arguments: { path: 'a' } };
          const [verdict] = await engine.decide(runId, [call], { issueGrants: true });
          let token = verdict?.grant?.token;
          if (decision === 'approved') {
            const approval = await engine.respondToApproval(verdict?.approval?.id as string, {
              approved: true,
              reviewer: 'rita',
            });
            token = (approval as { grant?: { token: string } }).grant?.token ?? token;
          }
          const digest = verdict?.arguments_digest as string;
          await engine.recordOutcome(runId, { call_id: 'c1', outcome });
          for (let index = 0; index < tries; index++) {
            if (path === 'token') {
              await expect(
                engine.consumeGrant(token as string, {
                  run_id: runId,
                  call_id: 'c1',
                  tool: call.tool,
                  arguments_digest: digest,
                }),
              ).rejects.toMatchObject({ kind: 'grant-invalid' });
            } else {
              await expect(
                engine.consumeOutstandingGrant({ tool: call.tool, arguments_digest: digest, run_id: runId }),
              ).resolves.toBeUndefined();
            }
          }
          await engine.endRun(runId);
          const records = (await engine.exportRun(runId)).records as LedgerRecord[];
          const ends = records.filter((record) => record.type === 'call-end');
          expect(ends).toHaveLength(1);
          expect(ends[0]).toMatchObject({ outcome, grant_consumed: false });
          const refusals = records.filter(
            (record) => record.type === 'refusal' && record.kind === 'grant-invalid',
          );
          expect(refusals).toHaveLength(path === 'token' ? tries : 0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is consumed while its call is open', async () => {
    const { engine, runId } = await testEngine();
    const [verdict] = await engine.decide(
      runId,
      [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }],
      {
        issueGrants: true,
      },
    );
    await expect(
      engine.consumeGrant(verdict?.grant?.token as string, {
        run_id: runId,
        call_id: 'c1',
        tool: 'read_file',
        arguments_digest: verdict?.arguments_digest as string,
      }),
    ).resolves.toMatchObject({ call_id: 'c1' });
    await expect(
      engine.recordOutcome(runId, { call_id: 'c1', outcome: 'ok', grant_consumed: true }),
    ).resolves.toBe('ok');
  });
});
