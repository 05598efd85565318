// A callgate data folder: the SQLite database and the log's signing key, side by side.
import { closeSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { checkKeyContinuity, checkLogKey, inspectDatabase, LOG_PUBLIC_KEY_META } from './continuity.js';
import { type LogKey, loadOrCreateLogKey } from './log-key.js';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';

/** The database file's name inside the data folder. */
const DATABASE_FILE = 'callgate.db';
const LOG_KEY_FILE = 'log-key.json';

/** An opened data folder. The caller owns `store` and must `close()` it. */
export interface DataDir {
  store: SqliteStore;
  logKey: LogKey;
  /** `<dataDir>/callgate.db`. */
  databasePath: string;
}

/** Options of {@link openDataDir}: the store's, and whether a new log may start here. */
export interface DataDirOptions extends SqliteStoreOptions {
  /**
   * Start a new log where a key file has no log beside it (no database, a 0-byte one, one with
   * nothing in it). Never overrides a log whose key is missing or different.
   */
  init?: boolean;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Opens the data folder `dataDir`, creating it (mode 0700) when missing: checks the database
 * (`PRAGMA quick_check`) and that the log key belongs to its log (see {@link checkKeyContinuity}),
 * loads or makes the log's key (`<dataDir>/log-key.json`, see {@link loadOrCreateLogKey}) and
 * opens `<dataDir>/callgate.db` (created with mode 0600: it holds approvals' arguments and vault
 * content) as a {@link SqliteStore} with `options`. A new log is bound to its key's public key
 * (store meta `ledger:public_key`) at once, so a later start with another key is refused.
 *
 * @throws CallgateError `ledger-invalid` for a damaged database or a key that does not belong to
 *   the log (with the key the log expects); `internal` for an unusable key file or database (see
 *   {@link loadOrCreateLogKey} and {@link SqliteStore.open}); Node's file system errors (EACCES,
 *   ENOTDIR) as thrown.
 */
export function openDataDir(dataDir: string, options: DataDirOptions = {}): DataDir {
  const { init = false, ...storeOptions } = options;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const databasePath = join(dataDir, DATABASE_FILE);
  const state = inspectDatabase(databasePath);
  checkKeyContinuity({ dataDir, state, keyPresent: exists(join(dataDir, LOG_KEY_FILE)), init });
  const logKey = loadOrCreateLogKey(dataDir);
  const continuity = checkLogKey(dataDir, state, logKey.privateKey, logKey.publicKey);
  // Create the file ourselves so its mode is 0600 (SQLite would use 0644 less the umask); SQLite
  // gives its -wal and -shm files the database file's mode.
  closeSync(openSync(databasePath, 'a', 0o600));
  const store = SqliteStore.open(databasePath, storeOptions);
  if (continuity === 'bind') {
    const binding = new Database(databasePath, { fileMustExist: true });
    try {
      binding
        .prepare(
          'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        )
        .run(LOG_PUBLIC_KEY_META, Buffer.from(logKey.publicKey).toString('base64url'));
    } finally {
      binding.close();
    }
  }
  return { store, logKey, databasePath };
}
