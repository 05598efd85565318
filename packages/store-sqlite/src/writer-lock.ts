// One writer per data folder. The ledger assigns sequence numbers in memory, so two processes
// appending to one log would interleave and break it; the lock file makes the second one refuse
// to start with a message that names the first.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CallgateError } from '@callgate/core';

/** The lock file's name inside the data folder. */
export const WRITER_LOCK_FILE = 'writer.lock';

/** A held writer lock. `release()` is idempotent; the lock is also released when the process exits. */
export interface WriterLock {
  readonly path: string;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the writer lock of `dataDir` (`<dataDir>/writer.lock`, holding the owner's pid, host and
 * start time). A lock left by a process that no longer runs on this host is taken over.
 *
 * @throws CallgateError `conflict` when another live process holds it, naming that process.
 */
export function acquireWriterLock(dataDir: string, purpose: string): WriterLock {
  const path = join(dataDir, WRITER_LOCK_FILE);
  const content = JSON.stringify({
    pid: process.pid,
    host: hostname(),
    purpose,
    since: new Date().toISOString(),
  });
  for (let attempt = 0; attempt < 2; attempt++) {
    let descriptor: number;
    try {
      descriptor = openSync(path, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder: { pid?: number; host?: string; purpose?: string; since?: string } = {};
      try {
        holder = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        // An unreadable or half-written lock: treat it as held, unless it is stale below.
      }
      const sameHost = holder.host === hostname();
      if (typeof holder.pid === 'number' && sameHost && !alive(holder.pid)) {
        unlinkSync(path);
        continue;
      }
      throw new CallgateError(
        'conflict',
        `the data folder ${dataDir} is in use by ${holder.purpose ?? 'another process'} (pid ${holder.pid ?? '?'} on ${holder.host ?? '?'}, since ${holder.since ?? '?'}); one process writes a data folder at a time: stop it, or use its HTTP API. If no such process runs, delete ${path}.`,
      );
    }
    writeSync(descriptor, content);
    closeSync(descriptor);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.removeListener('exit', release);
      try {
        if (readFileSync(path, 'utf8') === content) unlinkSync(path);
      } catch {
        // Already gone.
      }
    };
    process.on('exit', release);
    return { path, release };
  }
  throw new CallgateError('conflict', `could not take the writer lock ${path}`);
}
