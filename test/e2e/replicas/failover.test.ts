// kill -9 of one replica (the one signing checkpoints) under write load, on real PostgreSQL with
// three real `callgate serve` processes: no acknowledged record is lost, agents carry on with the
// survivors, every bundle verifies strictly with the key pinned, and the checkpoints signed
// before and after (by different replicas) form one chain. Then the database itself goes away:
// the gate fails closed, says why, and health says so; it recovers when the database returns.
import { loadavg } from 'node:os';
import { CallgateClient, isCallgateError } from '@callgate/client';
import { merkleRoot, openCheckpoint, verifyBundle } from '@callgate/core/ledger';
import type { LedgerRecord } from '@callgate/protocol';
import { PostgresStore } from '@callgate/store-postgres';
import { Agent, fetch as undiciFetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { adminQuery, testPostgresUrl } from '../../postgres/database.js';
import { runCallgate } from '../server/harness.js';
import { deploymentPerSuite, type Replica } from './harness.js';

const url = testPostgresUrl();
const AGENTS = 24;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Idle connections close well before the server's keep-alive timeout (no reuse race under load).
const dispatcher = new Agent({ keepAliveTimeout: 1000, connections: 64 });
const fetchWith = ((input: string | URL | Request, init?: RequestInit) =>
  undiciFetch(input as string, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;

/** What an agent had acknowledged by the server, per run. */
interface Acknowledged {
  runId: string;
  decided: string[];
  ended: string[];
  runEnded: boolean;
}

describe.skipIf(url === undefined)('three replicas on one PostgreSQL: replica and database loss', () => {
  const suite = deploymentPerSuite(url as string, () => ({
    count: 3,
    keys: { agent: 'agent', reviewer: 'reviewer' },
  }));

  const clientOf = (replica: Replica, key: string) =>
    new CallgateClient({
      url: replica.url,
      apiKey: suite.deployment.keys[key] ?? '',
      timeoutMs: 20_000,
      fetch: fetchWith,
    });

  it('kill -9 of the checkpoint signer under write load loses no acknowledged record and keeps one ledger', async () => {
    const { replicas } = suite.deployment;
    // The replica holding the checkpoint lease says so in its log.
    let holder: Replica | undefined;
    for (let tries = 0; tries < 100 && holder === undefined; tries++) {
      holder = replicas.find((replica) => replica.output().includes('checkpoint lease taken'));
      if (holder === undefined) await sleep(100);
    }
    expect(holder).toBeDefined();
    const victim = holder as Replica;
    const survivors = replicas.filter((replica) => replica !== victim);

    let stop = false;
    let killedAt = Number.POSITIVE_INFINITY;
    let servedBySurvivorsAfterKill = 0;
    const acknowledged: Acknowledged[] = [];

    async function agentLoop(index: number): Promise<void> {
      let replica = replicas[index % 3] as Replica;
      let client = clientOf(replica, 'agent');
      const failOver = () => {
        replica = survivors[index % 2] as Replica;
        client = clientOf(replica, 'agent');
      };
      let counter = 0;
      while (!stop) {
        let current: Acknowledged | undefined;
        try {
          const run = await client.startRun({ framework: 'failover' });
          current = { runId: run.run_id, decided: [], ended: [], runEnded: false };
          acknowledged.push(current);
          for (let step = 0; step < 3 && !stop; step++) {
            const id = `read-${index}-${counter++}`;
            await client.decide(run.run_id, [{ id, tool: 'read_file', arguments: { path: `/${id}` } }]);
            current.decided.push(id);
            await client.recordOutcome(run.run_id, {
              call_id: id,
              outcome: 'ok',
              result: { id },
              duration_ms: 0.1,
            });
            current.ended.push(id);
          }
          await client.endRun(run.run_id, 'completed');
          current.runEnded = true;
          if (performance.now() > killedAt && replica !== victim) servedBySurvivorsAfterKill++;
        } catch (error) {
          if (!(isCallgateError(error) && error.kind === 'gate-unavailable')) throw error;
          // The replica is gone: the agent's next requests go to a survivor (what a load balancer does).
          failOver();
        }
      }
    }

    const agents = Array.from({ length: AGENTS }, (_, index) => agentLoop(index));
    await sleep(1500);
    killedAt = performance.now();
    await victim.kill();
    await sleep(2500);
    stop = true;
    await Promise.all(agents);
    expect(servedBySurvivorsAfterKill).toBeGreaterThan(0);

    // Runs cut short by the kill are ended through a survivor: their state is in the database.
    const reviewer = clientOf(survivors[0] as Replica, 'reviewer');
    const agent = clientOf(survivors[1] as Replica, 'agent');
    for (const run of acknowledged.filter((entry) => !entry.runEnded)) {
      await agent.endRun(run.runId, 'cancelled');
      run.runEnded = true;
    }
    console.log(
      `failover: ${acknowledged.length} runs, ${acknowledged.reduce((sum, run) => sum + run.decided.length, 0)} acknowledged decisions; load ${loadavg()[0]?.toFixed(2)}`,
    );

    const publicKey = survivors[0]?.verifierKey ?? '';
    for (const run of acknowledged) {
      const bundle = await reviewer.exportRun(run.runId);
      const report = verifyBundle(bundle, { publicKey, strict: true });
      expect(report.failures, JSON.stringify(report.failures)).toEqual([]);
      const records = bundle.records as LedgerRecord[];
      const decisions = new Set(
        records.flatMap((record) => (record.type === 'call-decision' ? [record.call_id] : [])),
      );
      const ends = new Set(records.flatMap((record) => (record.type === 'call-end' ? [record.call_id] : [])));
      for (const id of run.decided) expect(decisions.has(id)).toBe(true);
      for (const id of run.ended) expect(ends.has(id)).toBe(true);
      expect(records[0]?.type).toBe('run-start');
      expect(records.at(-1)?.type).toBe('run-end');
    }

    // One chain of checkpoints over one tree: each signed with the pinned key over a prefix of
    // the same leaves, before and after the signer was killed.
    const store = await PostgresStore.open({ url: suite.database.url });
    try {
      const size = await store.ledgerSize();
      const leaves = await store.readLeafHashes(0, size);
      const checkpoints = await store.listCheckpoints(0, size);
      expect(checkpoints.length).toBeGreaterThan(1);
      const wall = Date.now() - (performance.now() - killedAt);
      expect(checkpoints.some((row) => row.ts < wall)).toBe(true);
      expect(checkpoints.some((row) => row.ts > wall)).toBe(true);
      for (const row of checkpoints) {
        const opened = openCheckpoint(row.note, publicKey);
        expect(opened.ok).toBe(true);
        expect(Buffer.from(merkleRoot(leaves.slice(0, row.size))).equals(Buffer.from(row.root))).toBe(true);
      }
    } finally {
      await store.close();
    }
  }, 120_000);

  it('fails closed when the database is lost mid-run, says so in health, and recovers', async () => {
    const replica = suite.deployment.replicas.find((candidate) => !candidate.exited()) as Replica;
    const agent = clientOf(replica, 'agent');
    const run = await agent.startRun({ framework: 'db-loss' });
    await agent.decide(run.run_id, [{ id: 'before', tool: 'read_file', arguments: { path: '/a' } }]);

    await adminQuery(url as string, `ALTER DATABASE ${suite.database.name} ALLOW_CONNECTIONS false`);
    await adminQuery(
      url as string,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${suite.database.name}'`,
    );
    try {
      const refused = await agent
        .decide(run.run_id, [{ id: 'during', tool: 'read_file', arguments: { path: '/b' } }])
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(isCallgateError(refused) && `${refused.kind}: ${refused.message}`).toMatch(
        /^gate-unavailable: .*PostgreSQL at .* is unreachable/,
      );
      const health = await fetchWith(`${replica.url}/v1/health`);
      expect(health.status).toBe(503);
      const body = (await health.json()) as { error: { kind: string; message: string } };
      expect(body.error.kind).toBe('gate-unavailable');
      expect(body.error.message).toMatch(/PostgreSQL at .* is unreachable/);
    } finally {
      await adminQuery(url as string, `ALTER DATABASE ${suite.database.name} ALLOW_CONNECTIONS true`);
    }
    let status = 0;
    for (let tries = 0; tries < 50 && status !== 200; tries++) {
      status = (await fetchWith(`${replica.url}/v1/health`)).status;
      if (status !== 200) await sleep(200);
    }
    expect(status).toBe(200);
    const after = await agent.decide(run.run_id, [
      { id: 'after', tool: 'read_file', arguments: { path: '/c' } },
    ]);
    expect(after.verdicts[0]?.status).toBe('allowed');
  }, 60_000);

  it('refuses to start when the database is unreachable, saying which and why', async () => {
    const closed = new URL(suite.database.url);
    closed.port = '1';
    const result = await runCallgate(['serve', '--store', closed.toString(), '--port', '0']);
    expect(result.code).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(
      /PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/cg_\w+ is unreachable/,
    );
  }, 30_000);
});
