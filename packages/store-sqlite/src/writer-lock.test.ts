import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acquireWriterLock, processStateOf, WRITER_LOCK_FILE } from './writer-lock.js';

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

  it.skipIf(process.platform !== 'linux')(
    'takes over a lock left by a process killed but not yet reaped (a zombie)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'callgate-lock-'));
      // `sleep 0` ends at once; its parent, the shell exec'd into `sleep 30`, never reaps it.
      const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      try {
        const zombie = Number(
          await new Promise<string>((resolve) =>
            parent.stdout.once('data', (chunk) => resolve(String(chunk))),
          ),
        );
        // Wait (without a deadline: the test runner has one) until the kernel shows it a zombie.
        while (processStateOf(readFileSync(`/proc/${zombie}/stat`, 'utf8')) !== 'Z')
          await new Promise((resolve) => setTimeout(resolve, 10));
        expect(() => process.kill(zombie, 0)).not.toThrow();
        writeFileSync(
          join(dir, WRITER_LOCK_FILE),
          JSON.stringify({ pid: zombie, host: hostname(), purpose: 'callgate serve' }),
        );
        const lock = acquireWriterLock(dir, 'new');
        expect(JSON.parse(readFileSync(join(dir, WRITER_LOCK_FILE), 'utf8'))).toMatchObject({
          pid: process.pid,
        });
        lock.release();
      } finally {
        parent.kill('SIGKILL');
      }
    },
  );

  it('reads the state of a process from /proc/PID/stat whatever its command name holds', () => {
    // proc(5): `pid (comm) state ppid ...`; comm is any 1-15 bytes, parentheses and spaces included.
    fc.assert(
      fc.property(
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 15 }).filter((comm) => !comm.includes('\n')),
        fc.constantFrom('R', 'S', 'D', 'Z', 'T', 't', 'X', 'I'),
        (pid, comm, state) => {
          expect(processStateOf(`${pid} (${comm}) ${state} 1 ${pid} ${pid} 0 -1 4194560\n`)).toBe(state);
        },
      ),
    );
    expect(processStateOf('')).toBeUndefined();
    expect(processStateOf('12 (x)')).toBeUndefined();
  });
});
