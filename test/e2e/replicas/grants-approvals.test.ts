// Three real `callgate serve` replicas on one real PostgreSQL: a grant is consumed exactly once
// whichever replica each consume reaches, and an approval answered on one replica wakes the agent
// long-polling another at once; every decision and every approval is recorded exactly once.
import { loadavg } from 'node:os';
import { CallgateClient, isCallgateError } from '@callgate/client';
import { verifyBundle } from '@callgate/core/ledger';
import type { LedgerRecord } from '@callgate/protocol';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { testPostgresUrl } from '../../postgres/database.js';
import { deploymentPerSuite } from './harness.js';

const url = testPostgresUrl();
const dispatcher = new Agent({ keepAliveTimeout: 1000, connections: 64 });
const RUNS = 200;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

describe.skipIf(url === undefined)('three replicas on one PostgreSQL: grants and approvals', () => {
  const suite = deploymentPerSuite(url as string, () => ({
    count: 3,
    keys: { agent: 'agent', reviewer: 'reviewer' },
  }));
  const client = (replica: number, key: string) =>
    new CallgateClient({
      url: suite.deployment.replicas[replica % 3]?.url ?? '',
      apiKey: suite.deployment.keys[key] ?? '',
      timeoutMs: 60_000,
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        undiciFetch(
          input as string,
          { ...(init as object), dispatcher } as never,
        )) as unknown as typeof fetch,
    });

  afterAll(async () => {
    if (process.env.CALLGATE_REPLICA_LOG)
      (await import('node:fs')).writeFileSync(
        process.env.CALLGATE_REPLICA_LOG,
        suite.deployment.replicas.map((replica) => replica.output()).join('\n=====\n'),
      );
  }, 60_000);

  it('every replica serves the same log key', () => {
    const keys = new Set(suite.deployment.replicas.map((replica) => replica.verifierKey));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^callgate\.local\/log\/[0-9a-f]{12}\+[0-9a-f]{8}\+/);
  });

  it('of 100 concurrent consumes of one grant spread over three replicas, exactly one succeeds', async () => {
    const agents = [0, 1, 2].map((replica) => client(replica, 'agent'));
    const reviewer = client(1, 'reviewer');
    const run = await (agents[0] as CallgateClient).startRun({ framework: 'replicas' });
    // An ask, answered on replica 1, its grant read on replica 2.
    const { verdicts } = await (agents[0] as CallgateClient).decide(run.run_id, [
      { id: 'pay-1', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } },
    ]);
    const approval = verdicts[0]?.approval;
    expect(approval).toBeDefined();
    await reviewer.approve(approval?.id ?? '', { reason: 'ok' });
    const state = await (agents[2] as CallgateClient).waitForApproval(approval?.id ?? '', {
      timeoutMs: 10_000,
    });
    expect(state.approval.status).toBe('approved');
    const token = state.grant?.token;
    expect(token).toBeDefined();

    const consume = {
      token: token ?? '',
      run_id: run.run_id,
      call_id: 'pay-1',
      tool: 'send_invoice',
      arguments: { to: 'acme', amount: 5000 },
    };
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, index) => (agents[index % 3] as CallgateClient).consumeGrant(consume)),
    );
    const ok = results.filter((result) => result.status === 'fulfilled');
    const refused = results.filter(
      (result) =>
        result.status === 'rejected' &&
        isCallgateError(result.reason) &&
        result.reason.kind === 'grant-invalid',
    );
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(99);
  }, 60_000);

  it(`${RUNS} concurrent runs, reviewers answering on another replica: each decision and approval recorded once, waiters woken at once`, async () => {
    const answered = new Map<string, 'approve' | 'deny'>();
    const wakeLatencies: number[] = [];
    const decided = new Map<string, number>();

    async function oneRun(index: number): Promise<string> {
      const agent = client(index, 'agent');
      const reviewer = client(index + 1, 'reviewer');
      const run = await agent.startRun({ framework: 'replicas', labels: { index: String(index) } });
      const { verdicts } = await agent.decide(run.run_id, [
        { id: `read-${index}`, tool: 'read_file', arguments: { path: `/data/${index}` } },
        { id: `pay-${index}`, tool: 'send_invoice', arguments: { to: `v-${index}`, amount: 5000 } },
      ]);
      decided.set(run.run_id, verdicts.length);
      for (const verdict of verdicts) {
        let grant = verdict.grant;
        if (verdict.status === 'pending' && verdict.approval) {
          const id = verdict.approval.id;
          const verdictOf: 'approve' | 'deny' = index % 2 === 0 ? 'approve' : 'deny';
          // The agent long-polls its replica; the reviewer answers on the next one a little later.
          // Wake latency: from the reviewer's answer being acknowledged (durable, published) to
          // the agent's long-poll on the other replica returning; 0 when it returned first.
          let acknowledged = Number.NaN;
          const waiting = agent.waitForApproval(id, { timeoutMs: 30_000 }).then((state) => {
            const woken = performance.now();
            void answering.then(() => wakeLatencies.push(Math.max(0, woken - acknowledged)));
            return state;
          });
          await new Promise((resolve) => setTimeout(resolve, 20 + (index % 7) * 5));
          answered.set(id, verdictOf);
          const answering = (
            verdictOf === 'approve'
              ? reviewer.approve(id, { reason: 'ok' })
              : reviewer.deny(id, { reason: 'no' })
          ).then(() => {
            acknowledged = performance.now();
          });
          await answering;
          const state = await waiting;
          expect(state.approval.status).toBe(verdictOf === 'approve' ? 'approved' : 'denied');
          if (state.approval.status !== 'approved') {
            await agent.recordOutcome(run.run_id, {
              call_id: verdict.call_id,
              outcome: 'denied',
              error_kind: 'approval-denied',
            });
            continue;
          }
          grant = state.grant;
        }
        expect(grant).toBeDefined();
        // The grant is consumed on yet another replica.
        await client(index + 2, 'agent').consumeGrant({
          token: grant?.token ?? '',
          run_id: run.run_id,
          call_id: verdict.call_id,
          tool: verdict.tool,
          arguments: verdict.arguments ?? {},
        });
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

    const runIds = await Promise.all(Array.from({ length: RUNS }, (_, index) => oneRun(index)));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const p50 = percentile(wakeLatencies, 50);
    const p99 = percentile(wakeLatencies, 99);
    console.log(
      `replicas: ${RUNS} runs; waiter woken after the answer on another replica was acknowledged: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (load ${loadavg()[0]?.toFixed(2)})`,
    );
    expect(wakeLatencies).toHaveLength(RUNS);
    // Woken by the answer, not by the end of the long-poll (30 s). The < 100 ms p99 figure is a
    // benchmark's (bench/postgres.mjs): this machine's load makes a timed assertion a coin toss.
    expect(p99).toBeLessThan(5000);

    const reviewer = client(0, 'reviewer');
    expect(await reviewer.listApprovals({ status: 'pending' })).toEqual([]);
    const publicKey = suite.deployment.replicas[0]?.verifierKey ?? '';
    for (const [index, runId] of runIds.entries()) {
      const bundle = await client(index + 1, 'reviewer').exportRun(runId);
      const report = verifyBundle(bundle, { publicKey, strict: true });
      expect(report.failures).toEqual([]);
      const records = bundle.records as LedgerRecord[];
      expect(records.filter((record) => record.type === 'call-decision')).toHaveLength(
        decided.get(runId) ?? -1,
      );
      const requests = records.filter((record) => record.type === 'approval-request');
      expect(requests).toHaveLength(1);
      for (const request of requests) {
        const responses = records.filter(
          (record) => record.type === 'approval-response' && record.approval_id === request.approval_id,
        );
        expect(responses).toHaveLength(1);
        expect(responses[0]).toMatchObject({
          status: answered.get(request.approval_id) === 'approve' ? 'approved' : 'denied',
          reviewer: 'reviewer',
        });
      }
      expect(records.filter((record) => record.type === 'call-end')).toHaveLength(2);
    }
  }, 120_000);
});
