// A callgate data folder: the SQLite database and the log's signing key, side by side.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { type LogKey, loadOrCreateLogKey } from './log-key.js';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';

/** The database file's name inside the data folder. */
const DATABASE_FILE = 'callgate.db';

/** An opened data folder. The caller owns `store` and must `close()` it. */
export interface DataDir {
  store: SqliteStore;
  logKey: LogKey;
  /** `<dataDir>/callgate.db`. */
  databasePath: string;
}

/**
 * Opens the data folder `dataDir`, creating it (mode 0700) when missing: loads or makes the
 * log's key (`<dataDir>/log-key.json`, see {@link loadOrCreateLogKey}) and opens
 * `<dataDir>/callgate.db` (created with mode 0600: it holds approvals' arguments and vault
 * content) as a {@link SqliteStore} with `options`.
 *
 * @throws CallgateError `internal` for an unusable key file or database (see
 *   {@link loadOrCreateLogKey} and {@link SqliteStore.open}); Node's file system errors (EACCES,
 *   ENOTDIR) as thrown.
 */
export function openDataDir(dataDir: string, options: SqliteStoreOptions = {}): DataDir {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const logKey = loadOrCreateLogKey(dataDir);
  const databasePath = join(dataDir, DATABASE_FILE);
  // Create the file ourselves so its mode is 0600 (SQLite would use 0644 less the umask); SQLite
  // gives its -wal and -shm files the database file's mode.
  closeSync(openSync(databasePath, 'a', 0o600));
  const store = SqliteStore.open(databasePath, options);
  return { store, logKey, databasePath };
}
