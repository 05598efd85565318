// Opening a callgate SQLite database: the options, the connection settings (WAL, synchronous,
// busy timeout, no automatic checkpoints) and the migration to the current schema.
import type { Logger } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import Database from 'better-sqlite3';
import { migrate } from './schema.js';

/** Options of {@link SqliteStore.open}. */
export interface SqliteStoreOptions {
  /**
   * SQLite `synchronous` mode, reported in every export. `NORMAL` (default): in WAL mode a
   * commit survives a crash of the process (the operating system holds it) but not a power cut
   * or kernel crash before the next checkpoint. `FULL`: every commit is fsync'd and survives both.
   */
  synchronous?: 'NORMAL' | 'FULL';
  /**
   * Milliseconds between background `PRAGMA wal_checkpoint(PASSIVE)` runs, which copy the WAL
   * into the database file on a worker thread with its own connection, off the commit path and
   * off the event loop (automatic checkpoints are off). Default 1000.
   */
  walCheckpointIntervalMs?: number;
  /** Milliseconds a statement waits for another connection's write lock. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Bound on the WAL file, in bytes (default {@link WAL_SIZE_LIMIT_BYTES}, 64 MiB). Past it, the
   * background checkpoint ends with `wal_checkpoint(RESTART)` so the next commit rewinds the log,
   * and the rewound file is truncated to this size (`journal_size_limit`). Under writes that never
   * pause, a passive checkpoint alone never rewinds the log and the file would grow without bound.
   */
  walSizeLimitBytes?: number;
  /** Told (`warn`) when a background checkpoint fails; it is retried at the next interval. */
  logger?: Logger;
}

/** Default bound on the WAL file (bytes): see {@link SqliteStoreOptions.walSizeLimitBytes}. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

function isConstraintError(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code.startsWith('SQLITE_CONSTRAINT');
}

/** Runs `write`; a SQLite constraint violation becomes a CallgateError `conflict` saying `what`. */
export function conflictOnConstraint<T>(what: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (isConstraintError(error)) throw new CallgateError('conflict', what, {}, { cause: error });
    throw error;
  }
}

/** A connection opened by {@link openDatabase}, with its resolved settings. */
export interface OpenedDatabase {
  database: Database.Database;
  synchronous: 'NORMAL' | 'FULL';
  walCheckpointIntervalMs: number;
  busyTimeoutMs: number;
  walSizeLimitBytes: number;
}

/**
 * Opens (creating when missing) the database at `path` with WAL mode, `synchronous`,
 * `busy_timeout`, `foreign_keys = ON`, `wal_autocheckpoint = 0` and a WAL size limit, and
 * migrates it to the current schema.
 *
 * @throws CallgateError `internal` for an in-memory path, a database that cannot use WAL or one
 *   at a newer schema version; RangeError for bad options; SqliteError when the file cannot be opened.
 */
export function openDatabase(path: string, options: SqliteStoreOptions = {}): OpenedDatabase {
  const synchronous = options.synchronous ?? 'NORMAL';
  const walCheckpointIntervalMs = options.walCheckpointIntervalMs ?? 1000;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const walSizeLimitBytes = options.walSizeLimitBytes ?? WAL_SIZE_LIMIT_BYTES;
  if (!Number.isSafeInteger(walSizeLimitBytes) || walSizeLimitBytes < 0) {
    throw new RangeError(`walSizeLimitBytes must be a whole number of bytes >= 0, got ${walSizeLimitBytes}`);
  }
  if (synchronous !== 'NORMAL' && synchronous !== 'FULL') {
    throw new RangeError(`synchronous must be NORMAL or FULL, got ${String(synchronous)}`);
  }
  if (!(walCheckpointIntervalMs > 0) || !Number.isFinite(walCheckpointIntervalMs)) {
    throw new RangeError(
      `walCheckpointIntervalMs must be a positive number of ms, got ${walCheckpointIntervalMs}`,
    );
  }
  if (path === '' || path === ':memory:' || path.startsWith('file::memory:')) {
    throw new CallgateError(
      'internal',
      'SqliteStore needs a database file (WAL mode); use MemoryStore for an in-memory store',
    );
  }
  const database = new Database(path, { timeout: busyTimeoutMs });
  try {
    database.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    const journalMode = database.pragma('journal_mode = WAL', { simple: true });
    if (journalMode !== 'wal') {
      throw new CallgateError(
        'internal',
        `database ${path} cannot use WAL mode (journal_mode is ${String(journalMode)})`,
      );
    }
    database.pragma(`synchronous = ${synchronous}`);
    database.pragma('foreign_keys = ON');
    database.pragma('wal_autocheckpoint = 0');
    database.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
    migrate(database);
    return { database, synchronous, walCheckpointIntervalMs, busyTimeoutMs, walSizeLimitBytes };
  } catch (error) {
    database.close();
    throw error;
  }
}
