// The SQLite schema of callgate's embedded store, as forward-only migrations.
//
// A migration is never edited once released: a change of schema is a new entry at the end of
// MIGRATIONS. The table `schema_migrations` records every version applied, and a database whose
// version is newer than this code knows is refused (it was written by a newer callgate).
//
// JSON columns hold RFC 8785 canonical text. Times are epoch milliseconds (INTEGER). Hashes and
// roots are 32-byte BLOBs; digests are `sha256:<hex>` TEXT.
//
// There are no FOREIGN KEY constraints on purpose: the Store interface lets the engine write a
// run's calls, approvals and records in whatever order it needs (the in-memory reference store
// requires no run row first), and a constraint here would make the two stores disagree. The
// connection still turns `foreign_keys` on, so a later migration that adds one is enforced.

import { CallgateError } from '@callgate/protocol';
import type Database from 'better-sqlite3';

/** One forward migration: `sql` takes the schema from `version - 1` to `version`. */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      'runs, calls, approvals, grants, idempotency keys, ledger records, checkpoints, openings, meta',
    sql: `
      CREATE TABLE runs (
        run_id        TEXT PRIMARY KEY,
        principal     TEXT NOT NULL,
        framework     TEXT NOT NULL,
        labels        TEXT NOT NULL,
        parent_run_id TEXT,
        status        TEXT NOT NULL,
        started_at    INTEGER NOT NULL,
        ended_at      INTEGER
      ) STRICT;
      CREATE INDEX runs_by_start ON runs (started_at DESC, run_id DESC);

      -- rowid order is decision order: an update of an attempt keeps its row (and place).
      CREATE TABLE calls (
        id               INTEGER PRIMARY KEY,
        run_id           TEXT NOT NULL,
        call_id          TEXT NOT NULL,
        attempt          INTEGER NOT NULL,
        minted           INTEGER NOT NULL,
        tool             TEXT NOT NULL,
        arguments_digest TEXT,
        decision         TEXT NOT NULL,
        rules            TEXT NOT NULL,
        approval_id      TEXT,
        idempotency_key  TEXT,
        outcome          TEXT,
        decided_at       INTEGER NOT NULL,
        ended_at         INTEGER
      ) STRICT;
      CREATE UNIQUE INDEX calls_by_attempt ON calls (run_id, call_id, attempt);

      CREATE TABLE approvals (
        id               TEXT PRIMARY KEY,
        run_id           TEXT NOT NULL,
        call_id          TEXT NOT NULL,
        tool             TEXT NOT NULL,
        arguments        TEXT,
        arguments_digest TEXT NOT NULL,
        rules            TEXT NOT NULL,
        reason           TEXT NOT NULL,
        status           TEXT NOT NULL,
        created_at       INTEGER NOT NULL,
        expires_at       INTEGER NOT NULL,
        resolved_at      INTEGER,
        reviewer         TEXT,
        response_reason  TEXT,
        edited           INTEGER
      ) STRICT;
      CREATE INDEX approvals_by_status ON approvals (status, created_at);
      CREATE INDEX approvals_by_run ON approvals (run_id, created_at);
      CREATE INDEX approvals_by_creation ON approvals (created_at);

      -- rowid order is creation order ("oldest first" for findGrants).
      CREATE TABLE grants (
        id               INTEGER PRIMARY KEY,
        token_hash       TEXT NOT NULL UNIQUE,
        v                INTEGER NOT NULL,
        run_id           TEXT NOT NULL,
        call_id          TEXT NOT NULL,
        tool             TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        expires_at       INTEGER NOT NULL,
        consumed_at      INTEGER
      ) STRICT;
      CREATE INDEX grants_by_binding ON grants (tool, arguments_digest);

      CREATE TABLE idempotency_keys (
        tool    TEXT NOT NULL,
        key     TEXT NOT NULL,
        call_id TEXT NOT NULL,
        PRIMARY KEY (tool, key)
      ) STRICT, WITHOUT ROWID;

      -- seq is the rowid: the record's Merkle leaf index, consecutive from 0.
      CREATE TABLE records (
        seq       INTEGER PRIMARY KEY,
        run_id    TEXT NOT NULL,
        run_seq   INTEGER NOT NULL,
        type      TEXT NOT NULL,
        canonical TEXT NOT NULL,
        leaf_hash BLOB NOT NULL,
        digest    TEXT NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX records_by_run ON records (run_id, run_seq);

      CREATE TABLE checkpoints (
        size INTEGER PRIMARY KEY,
        root BLOB NOT NULL,
        note TEXT NOT NULL,
        ts   INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE openings (
        commitment TEXT PRIMARY KEY,
        salt       TEXT NOT NULL,
        value      TEXT NOT NULL
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    description: 'api keys of a server (only their SHA-256), one live key per name',
    sql: `
      -- rowid order is creation order among keys created in the same millisecond.
      CREATE TABLE api_keys (
        id         INTEGER PRIMARY KEY,
        key_hash   TEXT NOT NULL UNIQUE,
        name       TEXT NOT NULL,
        role       TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT;
      -- A name may be reused only once its previous key is revoked.
      CREATE UNIQUE INDEX api_keys_live_name ON api_keys (name) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 3,
    description: 'approvals keep the values a framework injects into the arguments (shown to the reviewer)',
    sql: `
      -- RFC 8785 JSON of Approval.injected; NULL when the framework injects nothing.
      ALTER TABLE approvals ADD COLUMN injected TEXT;
    `,
  },
];

/** The schema version this code writes: the last migration's. */
export const SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

/** The version a database is at: 0 for a new (empty) database. Creates the version table. */
export function schemaVersion(database: Database.Database): number {
  database.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at  INTEGER NOT NULL
  ) STRICT`);
  const row = database
    .prepare<[], { version: number | null }>('SELECT max(version) AS version FROM schema_migrations')
    .get();
  return row?.version ?? 0;
}

/**
 * Brings `database` to {@link SCHEMA_VERSION}, applying each missing migration in its own
 * immediate (write-locked) transaction, so several processes opening one new database at once
 * apply each migration exactly once. `now` stamps `applied_at` (epoch ms).
 *
 * @returns the versions applied, in order (empty when the database was current).
 * @throws CallgateError `internal` when the database is at a newer version than this code knows
 *   (it was written by a newer callgate), or its recorded version has a hole.
 */
export function migrate(database: Database.Database, now: () => number = Date.now): number[] {
  const step = database.transaction((migration: Migration): boolean => {
    const current = schemaVersion(database);
    if (current > SCHEMA_VERSION) {
      throw new CallgateError(
        'internal',
        `database ${database.name} is at schema version ${current}, newer than this callgate knows (${SCHEMA_VERSION}); upgrade callgate`,
      );
    }
    if (current >= migration.version) return false;
    if (current !== migration.version - 1) {
      throw new CallgateError(
        'internal',
        `database ${database.name} is at schema version ${current}; migration ${migration.version} needs ${migration.version - 1}`,
      );
    }
    database.exec(migration.sql);
    database
      .prepare('INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)')
      .run(migration.version, migration.description, now());
    return true;
  });
  // MIGRATIONS is never empty, so the newer-version check above always runs at least once.
  return MIGRATIONS.filter((migration) => step.immediate(migration)).map((migration) => migration.version);
}
