// Load over real HTTP: 200 concurrent runs each decide a step; a quarter ask for a person and are
// approved or denied by a concurrent reviewer. Afterwards every decision is in the ledger, every
// approval was resolved exactly once, no grant was consumed twice, and every run's bundle verifies.
import { CallgateClient, isCallgateError } from '@callgate/client';
import { verifyBundle } from '@callgate/core/ledger';
import type { LedgerRecord } from '@callgate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startCallgate } from './harness.js';

const RUNS = 200;

let server: ServerProcess;

beforeAll(async () => {
  server = await startCallgate({
    keys: { 'load-agent': 'agent', 'load-reviewer': 'reviewer' },
    maxLifetimeMs: 600_000,
  });
}, 60_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
}, 30_000);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

describe('load over HTTP', () => {
  it(`${RUNS} concurrent runs with a concurrent reviewer`, async () => {
    let requests = 0;
    const counting = (async (input: string | URL | Request, init?: RequestInit) => {
      requests++;
      return fetch(input, init);
    }) as typeof fetch;
    const agent = new CallgateClient({
      url: server.url,
      apiKey: server.keys['load-agent'] ?? '',
      fetch: counting,
      timeoutMs: 60_000,
    });
    const reviewer = new CallgateClient({
      url: server.url,
      apiKey: server.keys['load-reviewer'] ?? '',
      fetch: counting,
      timeoutMs: 60_000,
    });
    const decisionLatencies: number[] = [];
    const decided = new Map<string, number>();
    const answered = new Map<string, 'approve' | 'deny'>();
    const doubleConsumed: string[] = [];
    let agentsDone = false;

    // The reviewer: polls the inbox and answers each pending approval once (half approved, half denied).
    const reviewing = (async () => {
      while (!agentsDone) {
        const pending = await reviewer.listApprovals({ status: 'pending' });
        await Promise.all(
          pending
            .filter((approval) => !answered.has(approval.id))
            .map(async (approval) => {
              const verdict =
                Math.floor(Number(approval.call_id.split('-')[1]) / 4) % 2 === 0 ? 'approve' : 'deny';
              answered.set(approval.id, verdict);
              if (verdict === 'approve') await reviewer.approve(approval.id, { reason: 'load: ok' });
              else await reviewer.deny(approval.id, { reason: 'load: no' });
            }),
        );
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    async function oneRun(index: number) {
      const run = await agent.startRun({ framework: 'load', labels: { index: String(index) } });
      const asks = index % 4 === 0;
      const calls = [
        { id: `read-${index}`, tool: 'read_file', arguments: { path: `/data/${index}.txt` } },
        {
          id: `pay-${index}`,
          tool: 'send_invoice',
          arguments: { to: `vendor-${index}`, amount: asks ? 5000 : 100 },
        },
        { id: `rm-${index}`, tool: 'delete_file', arguments: { path: '/' } },
      ];
      const started = performance.now();
      const { verdicts } = await agent.decide(run.run_id, calls, {
        message: { role: 'assistant', content: `step of run ${index}` },
      });
      decisionLatencies.push(performance.now() - started);
      decided.set(run.run_id, verdicts.length);
      for (const verdict of verdicts) {
        let grant = verdict.grant;
        let runArguments = verdict.arguments;
        if (verdict.status === 'pending' && verdict.approval) {
          const state = await agent.waitForApproval(verdict.approval.id, { timeoutMs: 60_000 });
          grant = state.grant;
          runArguments = state.arguments;
          if (state.approval.status !== 'approved') {
            await agent.recordOutcome(run.run_id, {
              call_id: verdict.call_id,
              outcome: 'denied',
              error_kind: 'approval-denied',
            });
            continue;
          }
        }
        if (verdict.status === 'refused' || !grant) {
          await agent.recordOutcome(run.run_id, {
            call_id: verdict.call_id,
            outcome: 'denied',
            ...(verdict.error ? { error_kind: verdict.error.kind } : {}),
          });
          continue;
        }
        const consume = {
          token: grant.token,
          run_id: run.run_id,
          call_id: verdict.call_id,
          tool: verdict.tool,
          arguments: runArguments ?? {},
        };
        await agent.consumeGrant(consume);
        try {
          await agent.consumeGrant(consume);
          doubleConsumed.push(verdict.call_id);
        } catch (error) {
          if (!isCallgateError(error) || error.kind !== 'grant-invalid') throw error;
        }
        await agent.recordOutcome(run.run_id, {
          call_id: verdict.call_id,
          outcome: 'ok',
          result: { index },
          duration_ms: 0.1,
          grant_consumed: true,
        });
      }
      await agent.endRun(run.run_id, 'completed');
      return run.run_id;
    }

    const started = performance.now();
    const runIds = await Promise.all(Array.from({ length: RUNS }, (_, index) => oneRun(index)));
    const seconds = (performance.now() - started) / 1000;
    agentsDone = true;
    await reviewing;

    const perSecond = requests / seconds;
    const p50 = percentile(decisionLatencies, 50);
    const p99 = percentile(decisionLatencies, 99);
    console.log(
      `load: ${RUNS} runs, ${requests} requests in ${seconds.toFixed(2)} s = ${perSecond.toFixed(0)} requests/s; ` +
        `decision latency over HTTP p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms; ${answered.size} approvals answered`,
    );

    expect(doubleConsumed).toEqual([]);
    expect(answered.size).toBe(RUNS / 4);
    expect(await reviewer.listApprovals({ status: 'pending' })).toEqual([]);

    // Every decision recorded, every approval resolved exactly once, every bundle verifies.
    let approvalsSeen = 0;
    for (const runId of runIds) {
      const bundle = await reviewer.exportRun(runId);
      const report = verifyBundle(bundle, { publicKey: server.verifierKey, strict: true });
      expect(report.failures).toEqual([]);
      const records = bundle.records as LedgerRecord[];
      expect(records.filter((record) => record.type === 'call-decision')).toHaveLength(
        decided.get(runId) ?? -1,
      );
      const requested = records.filter((record) => record.type === 'approval-request');
      for (const request of requested) {
        const responses = records.filter(
          (record) => record.type === 'approval-response' && record.approval_id === request.approval_id,
        );
        expect(responses).toHaveLength(1);
        expect(responses[0]).toMatchObject({
          status: answered.get(request.approval_id) === 'approve' ? 'approved' : 'denied',
          reviewer: 'load-reviewer',
        });
        approvalsSeen++;
      }
      const ends = records.filter((record) => record.type === 'call-end');
      expect(ends).toHaveLength(3);
    }
    expect(approvalsSeen).toBe(RUNS / 4);

    // The latency of one decision over HTTP when the server is not flooded: 500 in a row.
    const quiet = await agent.startRun({ framework: 'load-latency' });
    const sequential: number[] = [];
    for (let index = 0; index < 500; index++) {
      const began = performance.now();
      await agent.decide(quiet.run_id, [{ id: `q-${index}`, tool: 'read_file', arguments: { path: 'a' } }]);
      sequential.push(performance.now() - began);
    }
    console.log(
      `load: one decision at a time over HTTP: p50 ${percentile(sequential, 50).toFixed(2)} ms, p99 ${percentile(sequential, 99).toFixed(2)} ms`,
    );
  }, 180_000);
});
