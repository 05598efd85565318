// Background WAL checkpoints run on a worker thread with its own connection. Generated runs of
// appends, checkpoints and reads, interleaved in one turn of the event loop or across turns: every
// acknowledged record is in the ledger, readers (the store's and another connection) see all of
// them, and a checkpoint after the last write leaves every record in the database file itself.
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredRecord } from '@callgate/core';
import { silentLogger } from '@callgate/core';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordChain } from '../../../test/store-contract/fixtures.js';
import { SqliteStore } from './sqlite-store.js';
import { WalCheckpointer } from './wal-checkpointer.js';

const temporaryFolders: string[] = [];

function newFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'callgate-checkpointer-'));
  temporaryFolders.push(folder);
  return folder;
}

afterEach(() => {
  for (const folder of temporaryFolders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function canonicalRecords(path: string): string[] {
  const reader = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return reader.prepare('SELECT canonical FROM records ORDER BY seq').pluck().all() as string[];
  } finally {
    reader.close();
  }
}

type Step = { kind: 'append'; count: number } | { kind: 'checkpoint' } | { kind: 'read' } | { kind: 'turn' };

const steps = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 12 }) }),
    },
    { weight: 2, arbitrary: fc.constant({ kind: 'checkpoint' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'read' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'turn' as const }) },
  ),
  { minLength: 1, maxLength: 30 },
);

describe('background WAL checkpoints', () => {
  it('lose nothing acknowledged, and readers see the ledger, whatever the interleaving with writes', async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (run: Step[]) => {
        const folder = newFolder();
        const path = join(folder, 'callgate.db');
        // The timer never fires here: the run drives the checkpoints itself.
        const store = SqliteStore.open(path, { walCheckpointIntervalMs: 3_600_000 });
        const chain = new RecordChain();
        const acknowledged: StoredRecord[] = [];
        const inFlight: Promise<unknown>[] = [];
        try {
          for (const step of run) {
            if (step.kind === 'append') {
              const batch = chain.many(['run-a', 'run-b', 'run-c'], step.count);
              inFlight.push(store.appendRecords(batch).then(() => acknowledged.push(...batch)));
            } else if (step.kind === 'checkpoint') {
              // Not awaited: it runs on the worker while the writes queued beside it commit.
              inFlight.push(store.checkpointWal());
            } else if (step.kind === 'turn') {
              await new Promise((resolve) => setImmediate(resolve));
            } else {
              await Promise.all(inFlight.splice(0));
              const expected = acknowledged.map((stored) => stored.canonical);
              expect(canonicalRecords(path)).toEqual(expected);
              const read = await store.readRecords(0, acknowledged.length);
              expect(read).toEqual(acknowledged.map((stored) => stored.record));
            }
          }
          await Promise.all(inFlight.splice(0));
          const expected = acknowledged.map((stored) => stored.canonical);
          expect(await store.ledgerSize()).toBe(acknowledged.length);

          // A checkpoint after the last write copies every WAL frame into the database file: the
          // file alone, without its WAL, holds every acknowledged record.
          const report = await store.checkpointWal();
          expect(report).toBeDefined();
          expect(report?.busy).toBe(0);
          expect(report?.checkpointed).toBe(report?.log);
          const fileAlone = join(folder, 'file-alone.db');
          copyFileSync(path, fileAlone);
          expect(canonicalRecords(fileAlone)).toEqual(expected);
          expect(canonicalRecords(path)).toEqual(expected);
        } finally {
          await store.close();
        }
        // Closed: the worker's connection too, so the WAL file is gone and the records remain.
        expect(existsSync(`${path}-wal`)).toBe(false);
        expect(canonicalRecords(path)).toEqual(acknowledged.map((stored) => stored.canonical));
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('runs one checkpoint at a time, and none after close', async () => {
    const path = join(newFolder(), 'callgate.db');
    const store = SqliteStore.open(path, { walCheckpointIntervalMs: 3_600_000 });
    await store.appendRecords(new RecordChain().many(['run-a'], 20));
    const first = store.checkpointWal();
    expect(await store.checkpointWal()).toBeUndefined();
    expect((await first)?.checkpointed).toBeGreaterThan(0);
    await store.close();
    expect(await store.checkpointWal()).toBeUndefined();
  });

  it('checkpoints on the calling thread, and says so, when the worker cannot open the database', async () => {
    const warnings: string[] = [];
    let fallbacks = 0;
    const checkpointer = new WalCheckpointer({
      path: join(newFolder(), 'missing.db'),
      busyTimeoutMs: 100,
      walSizeLimitBytes: 1024,
      logger: { ...silentLogger, warn: (_fields: unknown, message: string) => warnings.push(message) },
      fallback: () => {
        fallbacks += 1;
      },
    });
    expect(await checkpointer.checkpoint()).toBeUndefined();
    // The worker failed to open the file: the next checkpoint runs on the calling thread.
    expect(await checkpointer.checkpoint()).toBeUndefined();
    expect(fallbacks).toBe(1);
    expect(warnings).toContain('the WAL checkpoint worker failed; checkpoints now run on the calling thread');
    await checkpointer.close();
  });
});

describe('the WAL under writes that never pause', () => {
  it('stays near its size limit: a checkpoint past the limit rewinds the log, and nothing committed is lost', async () => {
    const limit = 256 * 1024;
    const path = join(newFolder(), 'callgate.db');
    const writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer.pragma(`journal_size_limit = ${limit}`);
    writer.exec('CREATE TABLE rows (n INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    const insert = writer.prepare('INSERT INTO rows (n, body) VALUES (?, ?)');
    const body = Buffer.alloc(4096, 7);
    const checkpointer = new WalCheckpointer({
      path,
      busyTimeoutMs: 5_000,
      walSizeLimitBytes: limit,
      logger: silentLogger,
      fallback: () => writer.pragma('wal_checkpoint(PASSIVE)'),
    });
    const pause = new Int32Array(new SharedArrayBuffer(4));
    let committed = 0;
    let largest = 0;
    let restarts = 0;
    try {
      for (let round = 0; round < 24; round += 1) {
        // The worker copies while this thread commits one row every half millisecond: commits
        // land during (and after) its passive pass, as a busy server's do, so the pass never
        // finds the log wholly copied.
        const report = checkpointer.checkpoint();
        for (let row = 0; row < 32; row += 1) {
          insert.run(committed, body);
          committed += 1;
          Atomics.wait(pause, 0, 0, 0.5);
        }
        if ((await report)?.restarted) restarts += 1;
        largest = Math.max(largest, statSync(`${path}-wal`).size);
      }
      expect(writer.prepare('SELECT count(*) FROM rows').pluck().get()).toBe(committed);
    } finally {
      await checkpointer.close();
      writer.close();
    }
    // 24 rounds wrote ~3 MiB of frames, over 12 times the limit; the file stayed within a round or
    // two of writes past it, because the checkpoints past the limit rewound the log.
    expect(committed * body.length).toBeGreaterThanOrEqual(12 * limit);
    expect(largest).toBeLessThan(4 * limit);
    expect(restarts).toBeGreaterThan(0);
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare('SELECT count(*) FROM rows').pluck().get()).toBe(committed);
    reader.close();
  }, 30_000);
});
