// Crash durability: a writer process appending under load is killed with SIGKILL; every record
// it acknowledged (its appendRecords had resolved) must be in the reopened database, with no
// gap in seq, every run's hash chain intact and every leaf hash right. SIGKILL models a process
// crash (not a power cut): both NORMAL and FULL must survive it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalJson, sha256 } from '@callgate/core/crypto';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from './sqlite-store.js';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const writerScript = fileURLToPath(new URL('../test-support/crash-writer.mjs', import.meta.url));
const ACKNOWLEDGEMENTS_BEFORE_KILL = 300;

let buildOutput = '';
const folders: string[] = [];

beforeAll(() => {
  // The writer runs plain Node against the built packages. A type error elsewhere in the
  // workspace does not stop tsc from emitting, so the build's status only explains a failure.
  const build = spawnSync(
    process.execPath,
    [join(repositoryRoot, 'node_modules/typescript/bin/tsc'), '-b', 'packages/store-sqlite'],
    { cwd: repositoryRoot, encoding: 'utf8' },
  );
  buildOutput = `tsc -b exited ${build.status}\n${build.stdout}${build.stderr}`;
}, 180_000);

afterAll(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

interface WriterResult {
  acknowledged: number[];
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs the writer until it acknowledged `count` records, then kills it with SIGKILL. */
function writeUntilKilled(databasePath: string, synchronous: 'NORMAL' | 'FULL', count: number) {
  return new Promise<WriterResult>((resolve, reject) => {
    const child = spawn(process.execPath, [writerScript, databasePath, synchronous], {
      cwd: repositoryRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acknowledged: number[] = [];
    let pending = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`writer did not acknowledge ${count} records in time\n${stderr}\n${buildOutput}`));
    }, 30_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) acknowledged.push(Number(line));
      if (acknowledged.length >= count && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      resolve({ acknowledged, signal, stderr });
    });
  });
}

const digestOf = (text: string) => `sha256:${sha256(text).toString('hex')}`;

/** Checks the database at `path` from its raw rows; returns the log size. */
function verifyLog(path: string, acknowledged: number[]): number {
  const database = new Database(path);
  try {
    const rows = database
      .prepare<
        [],
        {
          seq: number;
          run_id: string;
          run_seq: number;
          type: string;
          canonical: string;
          leaf_hash: Buffer;
          digest: string;
        }
      >('SELECT seq, run_id, run_seq, type, canonical, leaf_hash, digest FROM records ORDER BY seq')
      .all();
    // No gaps: seq runs 0, 1, 2, ...
    expect(rows.map((row) => row.seq)).toEqual(rows.map((_, index) => index));
    // Every acknowledged record is there.
    const size = rows.length;
    expect(acknowledged.filter((seq) => !(Number.isInteger(seq) && seq >= 0 && seq < size))).toEqual([]);

    const heads = new Map<string, { run_seq: number; digest: string }>();
    for (const row of rows) {
      const record = JSON.parse(row.canonical) as {
        seq: number;
        run_id: string;
        run_seq: number;
        type: string;
        prev: string | null;
      };
      expect(canonicalJson(record), `canonical bytes of seq ${row.seq}`).toBe(row.canonical);
      expect([record.seq, record.run_id, record.run_seq, record.type]).toEqual([
        row.seq,
        row.run_id,
        row.run_seq,
        row.type,
      ]);
      const digest = digestOf(row.canonical);
      expect(row.digest, `digest of seq ${row.seq}`).toBe(digest);
      expect(row.leaf_hash.toString('hex'), `leaf hash of seq ${row.seq}`).toBe(
        sha256(Uint8Array.of(0), row.canonical).toString('hex'),
      );
      const head = heads.get(row.run_id);
      expect(record.run_seq, `run_seq of seq ${row.seq}`).toBe(head ? head.run_seq + 1 : 0);
      expect(record.prev, `prev of seq ${row.seq}`).toBe(head ? head.digest : null);
      heads.set(row.run_id, { run_seq: record.run_seq, digest });
    }
    return size;
  } finally {
    database.close();
  }
}

describe.each(['NORMAL', 'FULL'] as const)('crash durability, synchronous=%s', (synchronous) => {
  it('keeps every acknowledged record, gap-free and chained, across two SIGKILLs', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'callgate-crash-'));
    folders.push(folder);
    const path = join(folder, 'callgate.db');
    let previousSize = 0;

    for (let round = 1; round <= 2; round += 1) {
      const result = await writeUntilKilled(path, synchronous, ACKNOWLEDGEMENTS_BEFORE_KILL);
      expect(
        result.signal,
        `the writer must die by SIGKILL, not on its own:\n${result.stderr}\n${buildOutput}`,
      ).toBe('SIGKILL');
      expect(result.acknowledged.length).toBeGreaterThanOrEqual(ACKNOWLEDGEMENTS_BEFORE_KILL);
      // Round 2 continued the log of round 1.
      expect(result.acknowledged[0]).toBe(previousSize);

      const size = verifyLog(path, result.acknowledged);
      expect(size).toBeGreaterThan(Math.max(...result.acknowledged));

      // The store reopens the crashed database and serves it.
      const store = SqliteStore.open(path, { synchronous });
      try {
        expect(await store.ledgerSize()).toBe(size);
        expect(await store.readLeafHashes(0, size)).toHaveLength(size);
        expect((await store.readRecords(size - 1, size))[0]?.seq).toBe(size - 1);
      } finally {
        await store.close();
      }
      previousSize = size;
    }
  }, 90_000);
});
