import { ledgerRecordSchema } from '@callgate/protocol';
import { expect, it } from 'vitest';
import { hex, RecordChain, sealRecord } from './fixtures.js';
import type { CurrentStore } from './store-contract.js';

export function ledgerContract(store: CurrentStore): void {
  it('starts empty', async () => {
    expect(await store().ledgerSize()).toBe(0);
    expect(await store().readRecords(0, 10)).toEqual([]);
    expect(await store().readLeafHashes(0, 10)).toEqual([]);
    expect(await store().readRunRecords('run-1')).toEqual([]);
    expect(await store().runHead('run-1')).toBeUndefined();
  });

  it('appends batches and reads records, leaf hashes, runs and heads back', async () => {
    const chain = new RecordChain();
    const runs = ['run-a', 'run-b', 'run-c'];
    const all = chain.many(runs, 25);
    for (const stored of all) ledgerRecordSchema.parse(stored.record);
    await store().appendRecords(all.slice(0, 1));
    await store().appendRecords(all.slice(1, 11));
    await store().appendRecords([]);
    await store().appendRecords(all.slice(11));

    expect(await store().ledgerSize()).toBe(25);
    const records = all.map((stored) => stored.record);
    expect(await store().readRecords(0, 25)).toStrictEqual(records);
    expect(await store().readRecords(5, 9)).toStrictEqual(records.slice(5, 9));
    expect(await store().readRecords(20, 100)).toStrictEqual(records.slice(20));
    expect(await store().readRecords(25, 30)).toEqual([]);
    expect(await store().readRecords(7, 7)).toEqual([]);

    expect((await store().readLeafHashes(0, 25)).map(hex)).toEqual(
      all.map((stored) => hex(stored.leaf_hash)),
    );
    expect((await store().readLeafHashes(3, 6)).map(hex)).toEqual(
      all.slice(3, 6).map((s) => hex(s.leaf_hash)),
    );

    for (const runId of runs) {
      const ofRun = all.filter((stored) => stored.record.run_id === runId);
      expect(await store().readRunRecords(runId)).toStrictEqual(ofRun.map((stored) => stored.record));
      const last = ofRun.at(-1);
      expect(await store().runHead(runId)).toStrictEqual({
        run_seq: last?.record.run_seq,
        digest: last?.digest,
      });
    }
    expect(await store().readRunRecords('run-missing')).toEqual([]);
    expect(await store().runHead('run-missing')).toBeUndefined();
  });

  it('returns records whose canonical JSON is the bytes that were stored', async () => {
    const all = new RecordChain().many(['run-a'], 8);
    await store().appendRecords(all);
    const read = await store().readRecords(0, 8);
    expect(read.map((record) => sealRecord(record).canonical)).toEqual(all.map((stored) => stored.canonical));
  });

  it('refuses an append that does not start at the log size, and keeps the log as it was', async () => {
    const chain = new RecordChain();
    const all = chain.many(['run-a', 'run-b'], 6);
    await store().appendRecords(all.slice(0, 3));

    // A gap, a replay of an existing seq, and a batch starting past the end.
    await expect(store().appendRecords(all.slice(4, 6))).rejects.toThrow();
    await expect(store().appendRecords(all.slice(2, 4))).rejects.toThrow();
    await expect(store().appendRecords(all.slice(0, 1))).rejects.toThrow();
    expect(await store().ledgerSize()).toBe(3);
    expect(await store().readRecords(0, 10)).toStrictEqual(all.slice(0, 3).map((stored) => stored.record));

    await store().appendRecords(all.slice(3));
    expect(await store().ledgerSize()).toBe(6);
  });

  it('keeps appends of concurrent callers in seq order', async () => {
    const all = new RecordChain().many(['run-a', 'run-b', 'run-c', 'run-d'], 200);
    // Each batch is handed to the store in seq order, without waiting for the previous one.
    const batches = Array.from({ length: 20 }, (_, index) => all.slice(index * 10, index * 10 + 10));
    await Promise.all(batches.map((batch) => store().appendRecords(batch)));
    expect(await store().ledgerSize()).toBe(200);
    expect((await store().readRecords(0, 200)).map((record) => record.seq)).toEqual(all.map((_, seq) => seq));
  });
}
