import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireWriterLock, WRITER_LOCK_FILE } from './writer-lock.js';

describe('the writer lock of a data folder', () => {
  it('refuses a second writer, naming the first, until the first releases it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'callgate-lock-'));
    const first = acquireWriterLock(dir, 'callgate serve');
    expect(() => acquireWriterLock(dir, 'callgate export')).toThrow(
      expect.objectContaining({
        kind: 'conflict',
        message: expect.stringContaining(`callgate serve (pid ${process.pid}`),
      }),
    );
    first.release();
    expect(existsSync(join(dir, WRITER_LOCK_FILE))).toBe(false);
    const second = acquireWriterLock(dir, 'callgate export');
    second.release();
    second.release();
  });

  it('takes over a lock left by a process that no longer runs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'callgate-lock-'));
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const deadPid = Number(gone.stdout);
    writeFileSync(
      join(dir, WRITER_LOCK_FILE),
      JSON.stringify({ pid: deadPid, host: hostname(), purpose: 'old' }),
    );
    const lock = acquireWriterLock(dir, 'new');
    expect(JSON.parse(readFileSync(join(dir, WRITER_LOCK_FILE), 'utf8'))).toMatchObject({
      pid: process.pid,
      purpose: 'new',
    });
    lock.release();
  });
});
