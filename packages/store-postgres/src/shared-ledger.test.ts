// Two ledgers on two stores over one PostgreSQL schema behave as one log: what two server
// replicas do. Real PostgreSQL (CALLGATE_TEST_PG_URL), no mock.
import { generateLogSigner, Ledger, openCheckpoint, verifyBundle } from '@callgate/core';
import type { RecordBody } from '@callgate/protocol';
import fc from 'fast-check';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, testPostgresUrl } from '../../../test/postgres/database.js';
import { PostgresStore } from './postgres-store.js';

const url = testPostgresUrl();
const origin = 'callgate.test/shared-log';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const start: RecordBody = { type: 'run-start', principal: 'alice', framework: 'test', labels: {} };
const end: RecordBody = { type: 'run-end', status: 'completed', calls: 0 };
const message = (text: string): RecordBody => ({
  type: 'model-message',
  role: 'user',
  content_commitment: `sha256:${Buffer.from(text.padEnd(32, '.').slice(0, 32)).toString('hex')}`,
  tool_calls: [],
});

describe.skipIf(url === undefined)('a ledger shared by several engines (PostgreSQL)', () => {
  const opened: Array<{ ledger: Ledger; store: PostgresStore }> = [];
  const schemas: string[] = [];
  afterEach(async () => {
    for (const { ledger, store } of opened.splice(0)) {
      await ledger.close().catch(() => {});
      await store.close();
    }
    for (const schema of schemas.splice(0)) await dropSchema(url as string, schema);
  });

  async function replica(schema: string, signer = sharedSigner, everyMs = 100) {
    const store = await PostgresStore.open({ url: url as string, schema });
    const ledger = await Ledger.open(store, { signer, origin, checkpointEveryMs: everyMs });
    opened.push({ ledger, store });
    return { ledger, store };
  }
  const sharedSigner = generateLogSigner(origin);
  const newSchema = () => {
    const schema = freshSchema('shared');
    schemas.push(schema);
    return schema;
  };

  it('keys arguments digests with one secret on every replica, opened at once on a new log', async () => {
    const schema = newSchema();
    const replicas = await Promise.all([replica(schema), replica(schema), replica(schema)]);
    const digest = `sha256:${'ab'.repeat(32)}`;
    const decision = (callId: string): RecordBody => ({
      type: 'call-decision',
      call_id: callId,
      minted: false,
      attempt: 1,
      tool: 'send_invoice',
      arguments_digest: digest,
      arguments_commitment: null,
      effect: 'allow',
      rules: [],
      reason: '',
      policy_digest: `sha256:${'cd'.repeat(32)}`,
    });
    await replicas[0]?.ledger.append('run-k', start);
    const keyed = await Promise.all(
      replicas.map(({ ledger }, index) => ledger.append('run-k', decision(`c${index}`))),
    );
    const digests = keyed.map((record) => (record as { arguments_digest: string }).arguments_digest);
    expect(new Set(digests).size).toBe(1);
    expect(digests[0]).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(keyed.every((record) => record.v === 2)).toBe(true);
    const bundle = await replicas[1]?.ledger.exportRun('run-k');
    // The made-up policy digest has no document; every other check holds.
    const report = verifyBundle(bundle, { publicKey: sharedSigner.verifierKey });
    expect(report.failures.map((failure) => failure.check)).toEqual(['policy-missing']);
  });

  it('keeps one chain per run and one gap-free sequence when engines append to the same runs at once', async () => {
    const schema = newSchema();
    const replicas = await Promise.all([replica(schema), replica(schema), replica(schema)]);
    const runs = ['run-a', 'run-b', 'run-c'];
    await replicas[0]?.ledger.append('run-a', start);
    await replicas[1]?.ledger.append('run-b', start);
    await replicas[2]?.ledger.append('run-c', start);
    // 3 engines × 3 runs × 20 records, all in flight together.
    await Promise.all(
      replicas.flatMap(({ ledger }, index) =>
        runs.flatMap((runId) =>
          Array.from({ length: 20 }, (_, n) => ledger.append(runId, message(`${index}-${runId}-${n}`))),
        ),
      ),
    );
    for (const [index, runId] of runs.entries()) await replicas[index]?.ledger.append(runId, end);
    const store = replicas[0]?.store as PostgresStore;
    expect(await store.ledgerSize()).toBe(3 + 180 + 3);
    const all = await store.readRecords(0, 1000);
    expect(all.map((record) => record.seq)).toEqual(all.map((_, seq) => seq));
    for (const [index, runId] of runs.entries()) {
      const bundle = await (replicas[(index + 1) % 3] as { ledger: Ledger }).ledger.exportRun(runId);
      const report = verifyBundle(bundle, { publicKey: sharedSigner.verifierKey, strict: true });
      expect(report.failures).toEqual([]);
      expect(bundle.records).toHaveLength(62);
    }
  });

  it('signs checkpoints on one engine at a time, and another takes over when its lease ends', async () => {
    const schema = newSchema();
    // No cadence timers: the test decides who tries to sign when.
    const first = await replica(schema, sharedSigner, 60_000);
    const second = await replica(schema, sharedSigner, 60_000);
    await first.ledger.append('run-a', start);
    expect((await first.ledger.checkpoint())?.size).toBe(1);
    const holder = first;
    const other = second;
    expect(await holder.store.sequencer.holdLease()).toBe(true);
    expect(await other.store.sequencer.holdLease()).toBe(false);

    // The database ends the holder's lease connection: it can no longer sign.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`,
    );
    await admin.end();
    await sleep(50);
    let signed = false;
    const attempt = await holder.store.sequencer.signUnderLease(() => {
      signed = true;
      return undefined;
    });
    expect(attempt).toBeUndefined();
    expect(signed).toBe(false);

    // The other engine takes the lease and signs the next checkpoint.
    await other.ledger.append('run-b', start);
    const checkpoint = await other.ledger.checkpoint();
    expect(checkpoint?.size).toBe(2);
    expect(await other.store.sequencer.holdLease()).toBe(true);
    expect(await holder.store.sequencer.holdLease()).toBe(false);

    // One chain of checkpoints: each is consistent with the next, whoever signed it.
    const rows = await first.store.listCheckpoints(0, 100);
    expect(rows.map((row) => row.size)).toEqual([1, 2]);
    const opened = rows.map((row) => openCheckpoint(row.note, sharedSigner.verifierKey));
    expect(opened.every((result) => result.ok)).toBe(true);
    const bundle = await other.ledger.exportRun('run-a');
    expect(bundle.checkpoints).toHaveLength(2);
    expect(bundle.consistency).toHaveLength(1);
    expect(verifyBundle(bundle, { publicKey: sharedSigner.verifierKey }).failures).toEqual([]);
  });

  it('refuses an engine whose key differs from the key the log was started with', async () => {
    const schema = newSchema();
    await replica(schema);
    await expect(replica(schema, generateLogSigner(origin))).rejects.toThrow(/signed by key .*not/);
  });

  it('keeps the log one under generated interleavings of appends from several engines', async () => {
    const schema = newSchema();
    const replicas = await Promise.all([
      replica(schema, sharedSigner, 50),
      replica(schema, sharedSigner, 50),
    ]);
    let runCounter = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: 2 })), {
          minLength: 1,
          maxLength: 30,
        }),
        async (plan) => {
          const runs = [0, 1, 2].map(() => `gen-${runCounter++}`);
          await Promise.all(runs.map((runId, index) => replicas[index % 2]?.ledger.append(runId, start)));
          await Promise.all(
            plan.map(([engine, run], index) =>
              replicas[engine]?.ledger.append(runs[run] as string, message(`g${index}`)),
            ),
          );
          for (const runId of runs) {
            const bundle = await (replicas[1] as { ledger: Ledger }).ledger.exportRun(runId);
            const report = verifyBundle(bundle, { publicKey: sharedSigner.verifierKey });
            expect(report.failures).toEqual([]);
          }
        },
      ),
      { numRuns: 15 },
    );
  });
});
