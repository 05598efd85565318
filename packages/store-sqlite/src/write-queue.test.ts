// Group commit in SqliteStore: the writes of one turn share one transaction, each write's promise
// resolves only once that transaction committed, reads see every write made before them, and a
// failing write rejects alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { makeCall, makeGrant, makeRun, RecordChain } from '../../../test/store-contract/fixtures.js';
import { SqliteStore } from './sqlite-store.js';

const folders: string[] = [];
const stores: SqliteStore[] = [];

function openStore(): SqliteStore {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-queue-'));
  folders.push(folder);
  const store = SqliteStore.open(join(folder, 'callgate.db'));
  stores.push(store);
  return store;
}

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** Rows of `table` as another connection (another process) sees them: committed ones only. */
function committedRows(store: SqliteStore, table: 'calls' | 'records' | 'runs'): number {
  const other = new Database(store.path, { readonly: true });
  try {
    return (other.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    other.close();
  }
}

describe('SqliteStore group commit', () => {
  it('commits the writes of one turn together, and resolves each only after the commit', async () => {
    const store = openStore();
    const chain = new RecordChain();
    const writes = [
      store.appendRecords(chain.many(['run-a'], 3)),
      ...[1, 2, 3].map((index) => store.putCall(makeCall({ call_id: `call-${index}` }))),
    ];
    let settled = 0;
    for (const write of writes) void write.then(() => settled++);
    // Nothing is committed (or acknowledged) before the turn ends.
    expect(committedRows(store, 'calls')).toBe(0);
    expect(committedRows(store, 'records')).toBe(0);
    await Promise.resolve();
    expect(settled).toBe(0);
    await Promise.all(writes);
    expect(committedRows(store, 'calls')).toBe(3);
    expect(committedRows(store, 'records')).toBe(3);
  });

  it('lets a read see the writes made before it, committing them first', async () => {
    const store = openStore();
    const run = makeRun();
    const created = store.createRun(run);
    const call = store.putCall(makeCall({ run_id: run.run_id }));
    expect(await store.getRun(run.run_id)).toEqual(run);
    expect(committedRows(store, 'runs')).toBe(1);
    expect(await store.listCalls(run.run_id)).toHaveLength(1);
    await Promise.all([created, call]);
  });

  it('rejects a failing write alone; the others of its transaction commit', async () => {
    const store = openStore();
    const grant = makeGrant();
    await store.putGrant(grant);
    const [before, duplicate, after] = await Promise.allSettled([
      store.putCall(makeCall({ call_id: 'before' })),
      store.putGrant({ ...grant, call_id: 'call-2' }),
      store.putCall(makeCall({ call_id: 'after' })),
    ]);
    expect(before.status).toBe('fulfilled');
    expect(duplicate).toMatchObject({ status: 'rejected', reason: { kind: 'conflict' } });
    expect(after.status).toBe('fulfilled');
    expect((await store.listCalls('run-1')).map((call) => call.call_id)).toEqual(['before', 'after']);
  });

  it('keeps an append batch all or nothing inside a shared transaction', async () => {
    const store = openStore();
    const all = new RecordChain().many(['run-a'], 4);
    const [call, gap] = await Promise.allSettled([
      store.putCall(makeCall()),
      store.appendRecords([...all.slice(0, 2), ...all.slice(3)]),
    ]);
    expect(call.status).toBe('fulfilled');
    expect(gap).toMatchObject({ status: 'rejected', reason: { kind: 'conflict' } });
    expect(await store.ledgerSize()).toBe(0);
    await store.appendRecords(all);
    expect(await store.ledgerSize()).toBe(4);
  });

  it('stores a call as it was when putCall was called, not as changed afterwards', async () => {
    const store = openStore();
    const call = makeCall();
    const write = store.putCall(call);
    call.outcome = 'ok';
    await write;
    expect((await store.getCall('run-1', 'call-1'))?.outcome).toBeUndefined();
  });

  it('commits what is queued on close, and refuses writes after it', async () => {
    const store = openStore();
    const write = store.putCall(makeCall());
    await store.close();
    await write;
    const reopened = SqliteStore.open(store.path);
    stores.push(reopened);
    expect(await reopened.listCalls('run-1')).toHaveLength(1);
    await expect(store.putCall(makeCall({ call_id: 'late' }))).rejects.toThrow();
  });
});
