// One writer per data folder. The ledger assigns sequence numbers in memory, so two processes
// appending to one log would interleave and break it; the lock file makes the second one refuse
// to start with a message that names the first.
import { closeSync, existsSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
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

/**
 * The state letter of a process from the text of Linux `/proc/PID/stat` (proc(5): `pid (comm)
 * state ...`; `comm` may itself hold spaces and parentheses, so the state follows the last `)`),
 * or undefined when the text is not of that form.
 */
export function processStateOf(stat: string): string | undefined {
  const end = stat.lastIndexOf(')');
  if (end < 0) return undefined;
  return /^ (\S)/.exec(stat.slice(end + 1))?.[1];
}

/**
 * Whether `pid` names a running process. `kill(pid, 0)` succeeds on a zombie too (a process killed
 * but not yet reaped by its parent, as after `kill -9` of a server whose parent waits later), so on
 * Linux a process in state Z (zombie) or X (dead) in `/proc/PID/stat` counts as gone.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // No /proc (not Linux), or the process ended since: kill() said it was there, so keep it.
    return process.platform !== 'linux' || existsSync(`/proc/${pid}`);
  }
  const state = processStateOf(stat);
  return state !== 'Z' && state !== 'X';
}

/**
 * Takes the writer lock of `dataDir` (`<dataDir>/writer.lock`, holding the owner's pid, host and
 * start time). A lock left by a process that no longer runs on this host (exited, or killed and not
 * yet reaped: a zombie) is taken over.
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
