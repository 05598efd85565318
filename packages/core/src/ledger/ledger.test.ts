import { isCallgateError, type LedgerRecord, type RecordBody } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../crypto.js';
import { MemoryStore } from '../store/memory-store.js';
import { FRONTIER_META_KEY } from './frontier-store.js';
import { Ledger, type LedgerOptions } from './ledger.js';
import { hashRecord } from './record.js';
import { openCheckpoint } from './signed-note.js';
import { FIXTURE_ORIGIN, fixtureClock, fixtureSigner } from './testing/fixture.js';
import { InstrumentedStore } from './testing/instrumented-store.js';
import { verifyBundle } from './verify/verify-bundle.js';

const signer = fixtureSigner();
const options = (extra: Partial<LedgerOptions> = {}): LedgerOptions => ({
  signer,
  origin: FIXTURE_ORIGIN,
  clock: fixtureClock(),
  ...extra,
});
const message = (index: number): RecordBody => ({
  type: 'model-message',
  role: 'user',
  content_commitment: `sha256:${sha256(`message ${index}`).toString('hex')}`,
  tool_calls: [],
});
const start: RecordBody = { type: 'run-start', principal: 'alice', framework: 'test', labels: {} };
const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks the stored chain of a run: run_seq 0.., prev = digest of the previous record. */
async function expectChain(store: MemoryStore, runId: string, length: number): Promise<void> {
  const records = await store.readRunRecords(runId);
  expect(records).toHaveLength(length);
  let previous: LedgerRecord | undefined;
  for (const [index, record] of records.entries()) {
    expect(record.run_seq).toBe(index);
    expect(record.prev).toBe(previous === undefined ? null : hashRecord(previous).digest);
    previous = record;
  }
}

async function expectVerifies(ledger: Ledger, runId: string): Promise<void> {
  const report = verifyBundle(await ledger.exportRun(runId), { publicKey: signer.verifierKey });
  expect(report.failures).toEqual([]);
}

describe('Ledger.append', () => {
  it('assigns v, seq, run_seq, ts and prev', async () => {
    const ledger = await Ledger.open(new MemoryStore(), options());
    const first = await ledger.append('run-a', start);
    const second = await ledger.append('run-a', message(1));
    const other = await ledger.append('run-b', start);
    expect(first).toMatchObject({
      v: 2,
      seq: 0,
      run_id: 'run-a',
      run_seq: 0,
      ts: 1_760_000_000_000,
      prev: null,
    });
    expect(second).toMatchObject({ seq: 1, run_seq: 1, prev: hashRecord(first).digest });
    expect(other).toMatchObject({ seq: 2, run_seq: 0, prev: null });
    expect(ledger.size).toBe(3);
  });

  it('writes the appends of one tick in one store call (group commit)', async () => {
    const store = new InstrumentedStore();
    const ledger = await Ledger.open(store, options());
    await ledger.append('run-a', start);
    await ledger.append('run-b', start);
    store.writes.length = 0;
    const appends = [0, 1, 2, 3, 4, 5].map((i) => ledger.append(i % 2 === 0 ? 'run-a' : 'run-b', message(i)));
    const records = await Promise.all(appends);
    expect(store.writes).toEqual([[2, 3, 4, 5, 6, 7]]);
    expect(records.map((record) => record.seq)).toEqual([2, 3, 4, 5, 6, 7]);
    await expectChain(store, 'run-a', 4);
    await expectChain(store, 'run-b', 4);
  });

  it('resolves an append only once its write resolved', async () => {
    const store = new InstrumentedStore();
    const ledger = await Ledger.open(store, options());
    await ledger.append('run-a', start);
    store.hold();
    let done = false;
    const pending = ledger.append('run-a', message(1)).then(() => {
      done = true;
    });
    await tick();
    expect(done).toBe(false);
    expect(await store.ledgerSize()).toBe(1);
    store.release();
    await pending;
    expect(done).toBe(true);
  });

  it('chains concurrent appends to one run in call order, while writes are in flight', async () => {
    const store = new InstrumentedStore();
    const ledger = await Ledger.open(store, options());
    store.hold();
    const appends: Promise<LedgerRecord>[] = [ledger.append('run-a', start)];
    for (let i = 0; i < 30; i++) {
      appends.push(ledger.append('run-a', message(i)));
      if (i % 7 === 0) await Promise.resolve();
      if (i === 10) store.release();
      if (i % 11 === 0) await tick();
    }
    store.release();
    const records = await Promise.all(appends);
    expect(records.map((record) => record.run_seq)).toEqual(records.map((_, index) => index));
    expect(store.writes.length).toBeGreaterThan(1);
    expect(store.writes.length).toBeLessThan(31);
    await expectChain(store, 'run-a', 31);
    await expectVerifies(ledger, 'run-a');
  });

  it('rolls back every unacknowledged append when a write fails, and goes on consistently', async () => {
    const store = new InstrumentedStore();
    const ledger = await Ledger.open(store, options());
    await ledger.append('run-a', start);
    await ledger.append('run-b', start);
    store.failWrites = 1;
    const failed = await Promise.allSettled([
      ledger.append('run-a', message(1)),
      ledger.append('run-a', message(2)),
      ledger.append('run-b', message(3)),
    ]);
    for (const result of failed) {
      expect(result.status).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason;
      expect(isCallgateError(reason) && reason.kind).toBe('internal');
      expect((reason as Error).message).toMatch(/3 record\(s\) not recorded: disk full/);
    }
    expect(ledger.size).toBe(2);
    const next = await ledger.append('run-a', message(3));
    expect(next).toMatchObject({ seq: 2, run_seq: 1 });
    expect(await ledger.append('run-b', message(4))).toMatchObject({ seq: 3, run_seq: 1 });
    await expectChain(store, 'run-a', 2);
    await expectChain(store, 'run-b', 2);
    await expectVerifies(ledger, 'run-a');
  });

  it('also fails the appends queued behind a failing write', async () => {
    const store = new InstrumentedStore();
    const ledger = await Ledger.open(store, options());
    await ledger.append('run-a', start);
    await ledger.append('run-c', start);
    store.hold();
    store.failWrites = 1;
    const inFlight = ledger.append('run-a', message(1));
    await tick();
    const queued = ledger.append('run-a', message(2));
    const queuedOther = ledger.append('run-c', message(3));
    store.release();
    const results = await Promise.allSettled([inFlight, queued, queuedOther]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await ledger.append('run-a', message(4))).toMatchObject({ seq: 2, run_seq: 1 });
    expect(await ledger.append('run-c', message(5))).toMatchObject({ seq: 3, run_seq: 1 });
    await expectChain(store, 'run-a', 2);
    await expectVerifies(ledger, 'run-c');
  });

  it('refuses a record that does not match the schema, writing nothing', async () => {
    const store = new InstrumentedStore();
    const ledger = await Ledger.open(store, options());
    const bad = { type: 'policy-snapshot', policy_digest: 'sha256:NOPE' } as RecordBody;
    await expect(ledger.append('run-a', bad)).rejects.toMatchObject({ kind: 'ledger-invalid' });
    await expect(ledger.append('run-a', { ...message(0), role: Number.NaN } as never)).rejects.toThrow();
    expect(store.writes).toEqual([]);
    expect(await ledger.append('run-a', start)).toMatchObject({ seq: 0, run_seq: 0 });
  });

  it('keeps call order for appends made while a run head loads from the store', async () => {
    const store = new InstrumentedStore();
    const first = await Ledger.open(store, options());
    await first.append('run-a', start);
    await first.close();
    const second = await Ledger.open(store, options());
    const records = await Promise.all([1, 2, 3].map((i) => second.append('run-a', message(i))));
    expect(records.map((record) => record.run_seq)).toEqual([1, 2, 3]);
    await expectChain(store, 'run-a', 4);
  });

  it('rejects the appends waiting on a run head that could not be read, then retries', async () => {
    const store = new InstrumentedStore();
    const ledger = await Ledger.open(store, options());
    store.failRunHeads = 1;
    const failed = await Promise.allSettled([
      ledger.append('run-a', start),
      ledger.append('run-a', message(1)),
    ]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason.message).toMatch(
      /head of run run-a: database is locked/,
    );
    expect(await ledger.append('run-a', start)).toMatchObject({ seq: 0, run_seq: 0 });
  });

  it('continues a run after its run-end from the store', async () => {
    const store = new MemoryStore();
    const ledger = await Ledger.open(store, options());
    await ledger.append('run-a', start);
    await ledger.append('run-a', { type: 'run-end', status: 'completed', calls: 0 });
    await ledger.append('run-b', start);
    expect(await ledger.append('run-a', message(1))).toMatchObject({ run_seq: 2 });
    await expectChain(store, 'run-a', 3);
  });
});

describe('Ledger.open', () => {
  it('resumes size, run heads and frontier after a reopen', async () => {
    const store = new MemoryStore();
    const first = await Ledger.open(store, options());
    for (let i = 0; i < 7; i++) await first.append(i % 2 ? 'run-a' : 'run-b', i < 2 ? start : message(i));
    await first.close();
    const checkpointAtClose = first.latestCheckpoint;
    expect(checkpointAtClose?.size).toBe(7);

    const second = await Ledger.open(store, options());
    expect(second.size).toBe(7);
    expect(second.latestCheckpoint?.size).toBe(7);
    expect(await second.append('run-a', message(8))).toMatchObject({ seq: 7, run_seq: 3 });
    await expectChain(store, 'run-a', 4);
    await expectVerifies(second, 'run-a');
  });

  it('rebuilds the frontier from all leaves when the saved one is unusable', async () => {
    const store = new MemoryStore();
    const first = await Ledger.open(store, options());
    for (let i = 0; i < 5; i++) await first.append('run-a', i === 0 ? start : message(i));
    await first.close();
    await store.setMeta(FRONTIER_META_KEY, '{"size": 5, "hashes": ["garbage"]}');
    const second = await Ledger.open(store, options());
    await second.append('run-a', message(9));
    await expectVerifies(second, 'run-a');
  });

  it('refuses a store whose leaves contradict its latest checkpoint, or that lost records', async () => {
    const store = new MemoryStore();
    const first = await Ledger.open(store, options());
    await first.append('run-a', start);
    await first.close();
    const wrong = { ...(first.latestCheckpoint as NonNullable<typeof first.latestCheckpoint>) };
    await store.putCheckpoint({ ...wrong, size: 1, root: sha256('another root'), ts: wrong.ts + 1 });
    await store.setMeta(FRONTIER_META_KEY, '{}');
    await expect(Ledger.open(store, options())).rejects.toMatchObject({ kind: 'ledger-invalid' });
    await store.putCheckpoint({ ...wrong, size: 2, ts: wrong.ts + 2 });
    await expect(Ledger.open(store, options())).rejects.toThrow(/records were lost/);
  });

  it("refuses another origin than the store's log", async () => {
    const store = new MemoryStore();
    await Ledger.open(store, options());
    await expect(Ledger.open(store, options({ origin: 'other.example/log' }))).rejects.toMatchObject({
      kind: 'ledger-invalid',
    });
  });

  it('refuses bad options', async () => {
    await expect(Ledger.open(new MemoryStore(), options({ origin: '' }))).rejects.toThrow(/origin/);
    await expect(Ledger.open(new MemoryStore(), options({ checkpointEveryRecords: 0 }))).rejects.toThrow(
      /checkpointEveryRecords/,
    );
  });
});

describe('checkpoints', () => {
  it('signs one once N records are unsigned, off the hot path', async () => {
    const store = new MemoryStore();
    const ledger = await Ledger.open(
      store,
      options({ checkpointEveryRecords: 5, checkpointEveryMs: 60_000 }),
    );
    for (let i = 0; i < 4; i++) await ledger.append('run-a', i === 0 ? start : message(i));
    await tick();
    expect(await store.latestCheckpoint()).toBeUndefined();
    await ledger.append('run-a', message(5));
    expect(await store.latestCheckpoint()).toBeUndefined();
    await tick();
    await tick();
    const checkpoint = await store.latestCheckpoint();
    expect(checkpoint?.size).toBe(5);
    const opened = openCheckpoint(checkpoint?.note ?? '', signer.verifierKey);
    expect(opened.ok && opened.value.size).toBe(5);
    await ledger.close();
  });

  it('signs one T ms after a record was acknowledged', async () => {
    const store = new MemoryStore();
    const ledger = await Ledger.open(store, options({ checkpointEveryMs: 20 }));
    const started = performance.now();
    await ledger.append('run-a', start);
    expect(await store.latestCheckpoint()).toBeUndefined();
    while ((await store.latestCheckpoint()) === undefined && performance.now() - started < 2000)
      await sleep(5);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect((await store.latestCheckpoint())?.size).toBe(1);
    await ledger.close();
  });

  it('signs on demand, and not again when nothing changed', async () => {
    const store = new MemoryStore();
    const ledger = await Ledger.open(store, options());
    expect(await ledger.checkpoint()).toBeUndefined();
    await ledger.append('run-a', start);
    const first = await ledger.checkpoint();
    expect(first?.size).toBe(1);
    expect(await ledger.checkpoint()).toBe(first);
    expect(await store.listCheckpoints(0, 10)).toHaveLength(1);
  });

  it('reports background checkpoint failures to onError', async () => {
    const store = new InstrumentedStore();
    const errors: unknown[] = [];
    const ledger = await Ledger.open(
      store,
      options({ checkpointEveryRecords: 1, onError: (error) => errors.push(error) }),
    );
    store.failCheckpoints = 1;
    await ledger.append('run-a', start);
    await tick();
    await tick();
    expect(errors).toEqual([expect.objectContaining({ message: 'checkpoint table locked' })]);
    expect((await ledger.checkpoint())?.size).toBe(1);
  });

  it('retries a failing checkpoint once a period, not in a loop', async () => {
    const store = new InstrumentedStore();
    const errors: unknown[] = [];
    const ledger = await Ledger.open(
      store,
      options({ checkpointEveryRecords: 1, checkpointEveryMs: 40, onError: (error) => errors.push(error) }),
    );
    store.failCheckpoints = 1000;
    await ledger.append('run-a', start);
    await sleep(200);
    // One attempt right away, then one per 40 ms period: a handful, not thousands.
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeLessThanOrEqual(7);
    store.failCheckpoints = 0;
    for (let waited = 0; waited < 1000 && (await store.latestCheckpoint()) === undefined; waited += 20)
      await sleep(20);
    expect((await store.latestCheckpoint())?.size).toBe(1);
    await ledger.close();
  });

  it('closes with a final checkpoint and then refuses appends', async () => {
    const store = new MemoryStore();
    const ledger = await Ledger.open(store, options());
    const pending = ledger.append('run-a', start);
    await ledger.close();
    await pending;
    expect((await store.latestCheckpoint())?.size).toBe(1);
    await expect(ledger.append('run-a', message(1))).rejects.toThrow(/closed/);
    await ledger.close();
  });
});

describe('Ledger.exportRun', () => {
  it('refuses a run without records', async () => {
    const ledger = await Ledger.open(new MemoryStore(), options());
    await expect(ledger.exportRun('nobody')).rejects.toMatchObject({ kind: 'not-found' });
    await ledger.append('run-a', start);
    await expect(ledger.exportRun('nobody')).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('flushes pending appends and covers them with a fresh checkpoint', async () => {
    const store = new MemoryStore();
    const ledger = await Ledger.open(store, options());
    void ledger.append('run-a', start);
    void ledger.append('run-a', message(1));
    const bundle = await ledger.exportRun('run-a');
    expect(bundle.records).toHaveLength(2);
    expect(bundle.checkpoints).toHaveLength(1);
    expect(verifyBundle(bundle, { publicKey: signer.verifierKey }).ok).toBe(true);
  });
});
