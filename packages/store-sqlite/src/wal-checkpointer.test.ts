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
  it('stays near its size limit: a checkpoint past the limit rewinds the log, and nothing acknowledged is lost', async () => {
    const limit = 256 * 1024;
    const path = join(newFolder(), 'callgate.db');
    const store = SqliteStore.open(path, { walCheckpointIntervalMs: 5, walSizeLimitBytes: limit });
    const chain = new RecordChain();
    const acknowledged: string[] = [];
    let largest = 0;
    const started = Date.now();
    try {
      // Commits back to back for two seconds (four appends in flight per turn of the event loop),
      // so the worker's passive passes never find a moment without new frames.
      while (Date.now() - started < 2_000) {
        const batches = [0, 1, 2, 3].map(() => chain.many(['run-a', 'run-b'], 8));
        await Promise.all(
          batches.map((batch) =>
            store
              .appendRecords(batch)
              .then(() => acknowledged.push(...batch.map((stored) => stored.canonical))),
          ),
        );
        largest = Math.max(largest, statSync(`${path}-wal`).size);
        // A turn of the event loop, as a server's next request comes with one: the checkpoint
        // timer and the worker's answers run here.
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await store.ledgerSize()).toBe(acknowledged.length);
      expect(canonicalRecords(path)).toEqual(acknowledged);
    } finally {
      await store.close();
    }
    // Far more was written than the limit, yet the file stayed within a few limits of it (the
    // frames committed between two checkpoints, plus the RESTART's wait).
    expect(acknowledged.length * 300).toBeGreaterThan(20 * limit);
    expect(largest).toBeLessThan(8 * limit);
    expect(canonicalRecords(path)).toEqual(acknowledged);
  }, 30_000);
});
