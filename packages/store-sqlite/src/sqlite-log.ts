import type { CheckpointRow, Logger, RunHead, StoredRecord, StoreStatus } from '@callgate/core';
import { silentLogger } from '@callgate/core';
import type { LedgerRecord, Opening } from '@callgate/protocol';
import { CallgateError } from '@callgate/protocol';
import type Database from 'better-sqlite3';
import { conflictOnConstraint, type SqliteStoreOptions } from './database.js';
import { openingToRow, rowToCheckpoint, rowToOpening, toBuffer } from './rows.js';
import { prepareStatements, type Statements } from './statements.js';
import { StoreFaults } from './store-faults.js';
import { type CheckpointResult, WalCheckpointer } from './wal-checkpointer.js';
import { WriteQueue } from './write-queue.js';

/**
 * The connection {@link SqliteStore} is built on, and the log's tables: group commit (see
 * {@link WriteQueue}), WAL checkpoints, faults; records, run heads, checkpoints, openings and
 * settings. {@link SqliteStore} adds the gate's tables (runs, calls, approvals, grants, API keys).
 */
export abstract class SqliteLog {
  readonly synchronous: 'NORMAL' | 'FULL';
  /** The database file's path. */
  readonly path: string;
  protected readonly database: Database.Database;
  protected readonly statements: Statements;
  readonly #append: Database.Transaction<(records: StoredRecord[]) => void>;
  readonly #putOpenings: Database.Transaction<(rows: ReturnType<typeof openingToRow>[]) => void>;
  readonly #writes: WriteQueue;
  readonly #faults: StoreFaults;
  #probedAt = 0;
  readonly #checkpointTimer: NodeJS.Timeout;
  readonly #checkpointer: WalCheckpointer;
  protected readonly logger: Logger;
  protected closed = false;

  protected constructor(
    database: Database.Database,
    path: string,
    options: Required<
      Pick<
        SqliteStoreOptions,
        'synchronous' | 'walCheckpointIntervalMs' | 'busyTimeoutMs' | 'walSizeLimitBytes'
      >
    > &
      SqliteStoreOptions,
  ) {
    this.database = database;
    this.path = path;
    this.synchronous = options.synchronous;
    this.logger = options.logger ?? silentLogger;
    this.statements = prepareStatements(database);
    this.#append = database.transaction((records: StoredRecord[]) => {
      let size = this.statements.ledgerSize.get() ?? 0;
      for (const stored of records) {
        const { record } = stored;
        if (record.seq !== size) {
          throw new CallgateError('conflict', `append out of order: seq ${record.seq}, log size ${size}`, {
            seq: record.seq,
          });
        }
        this.statements.insertRecord.run(
          record.seq,
          record.run_id,
          record.run_seq,
          record.type,
          stored.canonical,
          toBuffer(stored.leaf_hash),
          stored.digest,
        );
        size += 1;
      }
    });
    this.#putOpenings = database.transaction((rows: ReturnType<typeof openingToRow>[]) => {
      for (const row of rows) this.statements.putOpening.run(row);
    });
    this.#faults = new StoreFaults(path);
    this.#writes = new WriteQueue(database, this.#faults);
    this.#checkpointer = new WalCheckpointer({
      path,
      busyTimeoutMs: options.busyTimeoutMs,
      walSizeLimitBytes: options.walSizeLimitBytes,
      logger: this.logger,
      fallback: () => this.database.pragma('wal_checkpoint(PASSIVE)'),
    });
    this.#checkpointTimer = setInterval(
      () => void this.#checkpointer.checkpoint(),
      options.walCheckpointIntervalMs,
    );
    this.#checkpointTimer.unref();
  }

  /**
   * One background checkpoint now (what the timer runs): resolves with SQLite's report, or
   * `undefined` when one was already running or it ran on this thread (see {@link WalCheckpointer}).
   */
  checkpointWal(): Promise<CheckpointResult | undefined> {
    return this.#checkpointer.checkpoint();
  }
  /** Commits the queued writes, so that a read sees them. */
  protected settle(): void {
    this.#writes.flush();
  }
  /**
   * Queues a write (see {@link WriteQueue}). After close, runs it at once, so that it rejects
   * with better-sqlite3's "database connection is not open". Write methods turn their input into
   * rows before queueing: a bad input rejects at once, and later changes to the caller's object do
   * not reach the database.
   */
  protected write<T>(apply: () => T): Promise<T> {
    if (this.closed) return new Promise<T>((resolve) => resolve(apply()));
    return this.#writes.write(apply);
  }
  /**
   * Appends a batch of records, all or none (a savepoint inside the write transaction). The
   * promise resolves after the commit (durable per `synchronous`).
   *
   * @throws CallgateError `conflict` when a record's `seq` is not the log's next (the batch must
   *   start at `ledgerSize()`, counting batches queued before it, and be consecutive) or its
   *   (run_id, run_seq) is already stored.
   */
  appendRecords(records: StoredRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.write(() =>
      conflictOnConstraint('a record with this run_id and run_seq exists', () => this.#append(records)),
    );
  }
  async ledgerSize(): Promise<number> {
    this.settle();
    return this.statements.ledgerSize.get() ?? 0;
  }
  async readRecords(from: number, to: number): Promise<LedgerRecord[]> {
    this.settle();
    return this.statements.readRecords
      .all(from, to)
      .map((canonical) => JSON.parse(canonical) as LedgerRecord);
  }
  async readRunRecords(runId: string): Promise<LedgerRecord[]> {
    this.settle();
    return this.statements.readRunRecords
      .all(runId)
      .map((canonical) => JSON.parse(canonical) as LedgerRecord);
  }
  async readLeafHashes(from: number, to: number): Promise<Uint8Array[]> {
    this.settle();
    return this.statements.readLeafHashes.all(from, to);
  }
  async runHead(runId: string): Promise<RunHead | undefined> {
    this.settle();
    const row = this.statements.runHead.get(runId);
    return row && { run_seq: row.run_seq, digest: row.digest };
  }
  /**
   * Stores a checkpoint; storing one of an already stored size with the same root is a no-op.
   * @throws CallgateError `ledger-invalid` when a checkpoint of that size with another root exists.
   */
  async updateCheckpointNote(size: number, note: string): Promise<boolean> {
    return this.write(() => this.statements.updateCheckpointNote.run(note, size).changes > 0);
  }
  async putCheckpoint(checkpoint: CheckpointRow): Promise<void> {
    const root = toBuffer(checkpoint.root);
    return this.write(() => {
      const { changes } = this.statements.insertCheckpoint.run(
        checkpoint.size,
        root,
        checkpoint.note,
        checkpoint.ts,
      );
      if (changes === 0 && !this.statements.getCheckpoint.get(checkpoint.size)?.root.equals(root)) {
        throw new CallgateError(
          'ledger-invalid',
          `a checkpoint of size ${checkpoint.size} with another root is stored: the log forked`,
          { size: checkpoint.size },
        );
      }
    });
  }
  async latestCheckpoint(): Promise<CheckpointRow | undefined> {
    this.settle();
    const row = this.statements.latestCheckpoint.get();
    return row && rowToCheckpoint(row);
  }
  async listCheckpoints(fromSize: number, toSize: number): Promise<CheckpointRow[]> {
    this.settle();
    return this.statements.listCheckpoints.all(fromSize, toSize).map(rowToCheckpoint);
  }
  async putOpenings(openings: Opening[]): Promise<void> {
    const rows = openings.map(openingToRow);
    return this.write(() => this.#putOpenings(rows));
  }
  async getOpenings(commitments: string[]): Promise<Opening[]> {
    this.settle();
    return commitments.flatMap((commitment) => {
      const row = this.statements.getOpening.get(commitment);
      return row ? [rowToOpening(row)] : [];
    });
  }
  /**
   * Whether the store can write: `ok`, or `unavailable` with SQLite's reason since a write failed
   * on a full disk or an I/O error. While unavailable, a call tries one small write (at most once a
   * second), so the status clears by itself once the disk has room again.
   */
  async status(): Promise<StoreStatus> {
    if (this.#faults.faulty && !this.closed && Date.now() - this.#probedAt >= 1000) {
      this.#probedAt = Date.now();
      await this.setMeta('store:probe', String(this.#probedAt)).catch(() => undefined);
    }
    return this.#faults.status();
  }
  async getMeta(key: string): Promise<string | undefined> {
    this.settle();
    return this.statements.getMeta.get(key);
  }
  async setMeta(key: string, value: string): Promise<void> {
    return this.write(() => {
      this.statements.setMeta.run(key, value);
    });
  }
  /**
   * Commits the queued writes, stops the checkpoint timer, checkpoints the WAL into the database
   * file and truncates it (`wal_checkpoint(TRUNCATE)`; skipped quietly when another connection is
   * reading), closes the connection, then the checkpoint worker's (the last to close removes the
   * WAL file). Calling it again does nothing; any other method afterwards throws.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.settle();
    this.closed = true;
    clearInterval(this.#checkpointTimer);
    try {
      this.database.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      this.database.close();
      await this.#checkpointer.close();
    }
  }
}
