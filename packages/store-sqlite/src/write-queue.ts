// Group commit for one SQLite connection: every write of the store is queued, and everything
// queued while the current JavaScript turn runs is committed in ONE immediate transaction at its
// end. A commit costs a dozen or more system calls (a WAL frame per changed page, and locks) even
// for one row, and rows committed together share pages, so concurrent gate decisions share one
// commit instead of paying one each.
import type Database from 'better-sqlite3';

/** Told about each batch: a commit, or the error a failed write is about to reject with. */
export interface WriteObserver {
  committed(): void;
  /** Returns the error to reject with (e.g. a typed one for a full disk). */
  failed(error: unknown): unknown;
}

interface QueuedWrite {
  apply: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Queues writes for `database` and commits them together.
 *
 * - `write(apply)` queues `apply` (synchronous statements, run later inside the batch's
 *   transaction) and returns a promise that resolves with what `apply` returned once the
 *   transaction holding it committed: a resolved write is durable per the connection's
 *   `synchronous` mode. A write that throws rejects alone: a single statement that fails is
 *   undone by SQLite itself, and several statements belong in a nested `database.transaction`
 *   (a savepoint). If a failure ends the whole transaction (an I/O error, a full disk), or the
 *   commit fails, every write of the batch rejects with that error: none of them is stored.
 * - The batch commits at the end of the current turn: after the pending promise jobs and the
 *   `process.nextTick` callbacks queued before it (a ledger that schedules its own batch that
 *   way joins this commit), before any timer or I/O callback. No transaction stays open between
 *   turns, so the background WAL checkpoint never runs inside one.
 * - `flush()` commits what is queued right now; reads call it first, so they see every write
 *   made before them.
 */
export class WriteQueue {
  readonly #database: Database.Database;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;
  readonly #observer: WriteObserver | undefined;
  #pending: QueuedWrite[] = [];
  #scheduled = false;

  constructor(database: Database.Database, observer?: WriteObserver) {
    this.#database = database;
    this.#observer = observer;
    this.#begin = database.prepare('BEGIN IMMEDIATE');
    this.#commit = database.prepare('COMMIT');
    this.#rollback = database.prepare('ROLLBACK');
  }

  /** Queues `apply`; resolves with its result once committed, rejects with what it threw. */
  write<T>(apply: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        process.nextTick(this.#afterTicksQueuedBefore);
      }
    });
  }

  // Two hops: the first lets the nextTick callbacks already queued (a ledger's batch) run and
  // queue their writes; the second commits them all.
  readonly #afterTicksQueuedBefore = (): void => {
    process.nextTick(this.#scheduledFlush);
  };

  readonly #scheduledFlush = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  /** Commits every queued write now, in one transaction. Never throws: writes reject instead. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    const observed = (error: unknown) => (this.#observer ? this.#observer.failed(error) : error);
    try {
      this.#begin.run();
    } catch (error) {
      const rejection = observed(error);
      for (const write of batch) write.reject(rejection);
      return;
    }
    const results: unknown[] = new Array(batch.length);
    const failed: boolean[] = new Array(batch.length).fill(false);
    for (let i = 0; i < batch.length; i++) {
      try {
        results[i] = (batch[i] as QueuedWrite).apply();
      } catch (error) {
        results[i] = observed(error);
        failed[i] = true;
        if (!this.#database.inTransaction) {
          // SQLite rolled the whole transaction back: nothing of this batch is stored.
          for (const write of batch) write.reject(results[i]);
          return;
        }
      }
    }
    try {
      this.#commit.run();
    } catch (error) {
      try {
        if (this.#database.inTransaction) this.#rollback.run();
      } catch {
        // The connection reports the commit's error below; a failed rollback adds nothing.
      }
      const rejection = observed(error);
      for (const write of batch) write.reject(rejection);
      return;
    }
    // A commit that wrote something shows the store writes again (an empty one proves nothing).
    if (failed.includes(false)) this.#observer?.committed();
    for (let i = 0; i < batch.length; i++) {
      const write = batch[i] as QueuedWrite;
      if (failed[i]) write.reject(results[i]);
      else write.resolve(results[i]);
    }
  }
}
