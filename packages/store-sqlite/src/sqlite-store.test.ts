import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApproval, makeGrant, RecordChain } from '../../../test/store-contract/fixtures.js';
import { describeStoreContract } from '../../../test/store-contract/store-contract.js';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';

const temporaryFolders: string[] = [];

function newDatabasePath(): string {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-sqlite-'));
  temporaryFolders.push(folder);
  return join(folder, 'callgate.db');
}

afterEach(() => {
  for (const folder of temporaryFolders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describeStoreContract(
  'SqliteStore (NORMAL)',
  async () => SqliteStore.open(join(mkdtempSync(join(tmpdir(), 'callgate-contract-')), 'callgate.db')),
  (store) => rmSync(dirname((store as SqliteStore).path), { recursive: true, force: true }),
);

describeStoreContract(
  'SqliteStore (FULL)',
  async () =>
    SqliteStore.open(join(mkdtempSync(join(tmpdir(), 'callgate-contract-')), 'callgate.db'), {
      synchronous: 'FULL',
    }),
  (store) => rmSync(dirname((store as SqliteStore).path), { recursive: true, force: true }),
);

async function withStore<T>(
  path: string,
  options: SqliteStoreOptions,
  use: (store: SqliteStore) => Promise<T>,
): Promise<T> {
  const store = SqliteStore.open(path, options);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

describe('SqliteStore', () => {
  it('sets WAL mode, the synchronous mode it reports, and no automatic checkpoints', async () => {
    for (const synchronous of ['NORMAL', 'FULL'] as const) {
      const path = newDatabasePath();
      await withStore(path, { synchronous }, async (store) => {
        expect(store.synchronous).toBe(synchronous);
        expect(store.path).toBe(path);
        // A second connection sees the file's journal mode.
        const reader = new Database(path, { readonly: true });
        expect(reader.pragma('journal_mode', { simple: true })).toBe('wal');
        reader.close();
      });
    }
    await withStore(newDatabasePath(), {}, async (store) => expect(store.synchronous).toBe('NORMAL'));
  });

  it('refuses an in-memory database and bad options', () => {
    expect(() => SqliteStore.open(':memory:')).toThrow(/MemoryStore/);
    expect(() => SqliteStore.open(newDatabasePath(), { walCheckpointIntervalMs: 0 })).toThrow(RangeError);
    expect(() => SqliteStore.open(newDatabasePath(), { synchronous: 'OFF' as 'FULL' })).toThrow(RangeError);
  });

  it('keeps everything across close and reopen, and migrates only once', async () => {
    const path = newDatabasePath();
    const all = new RecordChain().many(['run-a', 'run-b'], 10);
    await withStore(path, {}, async (store) => {
      await store.appendRecords(all);
      await store.setMeta('origin', 'callgate.example/log');
    });
    await withStore(path, {}, async (store) => {
      expect(await store.ledgerSize()).toBe(10);
      expect(await store.readRecords(0, 10)).toStrictEqual(all.map((stored) => stored.record));
      expect(await store.getMeta('origin')).toBe('callgate.example/log');
    });
    const database = new Database(path, { readonly: true });
    const versions = database.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
    database.close();
    expect(versions).toEqual(MIGRATIONS.map((migration) => migration.version));
    expect(versions.at(-1)).toBe(SCHEMA_VERSION);
  });

  it('migrates a database of an older schema version forward, keeping its data', async () => {
    const path = newDatabasePath();
    const [first] = MIGRATIONS;
    const database = new Database(path);
    database.pragma('journal_mode = WAL');
    database.exec(`CREATE TABLE schema_migrations (
      version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
    database.exec(first?.sql ?? '');
    database.prepare('INSERT INTO schema_migrations VALUES (1, ?, 0)').run(first?.description);
    database.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('origin', 'callgate.example/log');
    database.close();

    await withStore(path, {}, async (store) => {
      expect(await store.getMeta('origin')).toBe('callgate.example/log');
      await store.putApiKey({ key_hash: 'ab', name: 'ci', role: 'agent', created_at: 1 });
      expect(await store.listApiKeys()).toHaveLength(1);
    });
  });

  it('refuses a database written by a newer schema version', async () => {
    const path = newDatabasePath();
    await withStore(path, {}, async () => {});
    const database = new Database(path);
    database
      .prepare('INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)')
      .run(SCHEMA_VERSION + 1, 'from the future', Date.now());
    database.close();
    expect(() => SqliteStore.open(path)).toThrow(/newer than this callgate knows/);
  });

  it('appends a batch all or nothing', async () => {
    await withStore(newDatabasePath(), {}, async (store) => {
      const all = new RecordChain().many(['run-a'], 6);
      const withGap = [...all.slice(0, 3), ...all.slice(4)];
      await expect(store.appendRecords(withGap)).rejects.toMatchObject({ kind: 'conflict' });
      expect(await store.ledgerSize()).toBe(0);
      await store.appendRecords(all);
      expect(await store.ledgerSize()).toBe(6);
    });
  });

  it('refuses a second record at the same run position', async () => {
    await withStore(newDatabasePath(), {}, async (store) => {
      const first = new RecordChain().next('run-a');
      const samePlace = new RecordChain(1).next('run-a');
      await store.appendRecords([first]);
      await expect(store.appendRecords([samePlace])).rejects.toMatchObject({ kind: 'conflict' });
      expect(await store.ledgerSize()).toBe(1);
    });
  });

  it('stores a grant spent in one write as the row a put and a consume leave', async () => {
    await withStore(newDatabasePath(), {}, async (store) => {
      const row = (tokenHash: string) => {
        const reader = new Database(store.path, { readonly: true });
        try {
          return reader.prepare('SELECT * FROM grants WHERE token_hash = ?').get(tokenHash) as Record<
            string,
            unknown
          >;
        } finally {
          reader.close();
        }
      };
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 86_400_000 }),
          fc.integer({ min: 0, max: 2_000_000_000_000 }),
          fc.string({ minLength: 1, maxLength: 12 }),
          async (ttl, now, callId) => {
            const spent = makeGrant({ call_id: callId, expires_at: now + ttl });
            const twice = { ...makeGrant(), ...spent, token_hash: makeGrant().token_hash };
            await store.putSpentGrant(spent, now);
            await store.putGrant(twice);
            expect(await store.consumeGrant(twice.token_hash, now)).toStrictEqual(twice);
            const { token_hash: _, id: __, ...one } = row(spent.token_hash);
            const { token_hash: ___, id: ____, ...two } = row(twice.token_hash);
            expect(one).toStrictEqual(two);
            expect(one.consumed_at).toBe(now);
          },
        ),
        { numRuns: 30 },
      );
    });
  });

  it('refuses duplicate grants, re-opening an approval, and a forked checkpoint', async () => {
    await withStore(newDatabasePath(), {}, async (store) => {
      const grant = makeGrant();
      await store.putGrant(grant);
      await expect(store.putGrant({ ...grant, call_id: 'call-2' })).rejects.toMatchObject({
        kind: 'conflict',
      });

      const approval = makeApproval();
      await store.createApproval(approval);
      await expect(store.resolveApproval(approval.id, { status: 'pending', resolved_at: 1 })).rejects.toThrow(
        RangeError,
      );
      await expect(store.createApproval(approval)).rejects.toMatchObject({ kind: 'conflict' });

      const checkpoint = { size: 5, root: new Uint8Array(32).fill(1), note: 'note', ts: 1 };
      await store.putCheckpoint(checkpoint);
      await store.putCheckpoint({ ...checkpoint, note: 'same root, signed again', ts: 2 });
      await expect(
        store.putCheckpoint({ ...checkpoint, root: new Uint8Array(32).fill(2) }),
      ).rejects.toMatchObject({
        kind: 'ledger-invalid',
      });
      expect((await store.latestCheckpoint())?.note).toBe('note');
    });
  });

  it('resolves an approval and consumes a grant exactly once across two connections', async () => {
    const path = newDatabasePath();
    const first = SqliteStore.open(path);
    const second = SqliteStore.open(path);
    try {
      const approval = makeApproval();
      const grant = makeGrant({ expires_at: Number.MAX_SAFE_INTEGER });
      await first.createApproval(approval);
      await first.putGrant(grant);
      const resolutions = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          (index % 2 === 0 ? first : second).resolveApproval(approval.id, {
            status: 'approved',
            resolved_at: index,
            reviewer: `reviewer-${index}`,
          }),
        ),
      );
      expect(resolutions.filter((result) => result !== undefined)).toHaveLength(1);
      const consumptions = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          (index % 2 === 0 ? second : first).consumeGrant(grant.token_hash, 1),
        ),
      );
      expect(consumptions.filter((result) => result !== undefined)).toStrictEqual([grant]);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('checkpoints the WAL in the background and truncates it on close', async () => {
    const path = newDatabasePath();
    const store = SqliteStore.open(path, { walCheckpointIntervalMs: 20 });
    const mainFileSize = () => statSync(path).size;
    const before = mainFileSize();
    // Appended records land in the WAL; only a checkpoint copies them into the main file.
    await store.appendRecords(new RecordChain().many(['run-a', 'run-b'], 2000));
    expect(mainFileSize()).toBe(before);
    await expect.poll(mainFileSize, { timeout: 5000, interval: 20 }).toBeGreaterThan(before + 100_000);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    await store.close();
    await store.close();
    const walSize = (() => {
      try {
        return statSync(`${path}-wal`).size;
      } catch {
        return 0;
      }
    })();
    expect(walSize).toBe(0);
    await expect(store.ledgerSize()).rejects.toThrow();
  });
});
