// The PostgreSQL schema of callgate's shared store, as forward-only migrations.
//
// A migration is never edited once released: a change of schema is a new entry at the end of
// MIGRATIONS. `schema_migrations` records every version applied; a database at a newer version
// than this code knows is refused (it was written by a newer callgate). Several replicas starting
// together apply each migration once: migrations run under a transaction-scoped advisory lock.
//
// JSON columns hold RFC 8785 canonical text (TEXT, not JSONB: the bytes read back are the bytes
// written). Times are epoch milliseconds (BIGINT). Hashes and roots are 32-byte BYTEA; digests
// are `sha256:<hex>` TEXT. Like the SQLite schema, no foreign keys: the Store interface lets the
// engine write a run's calls, approvals and records in whatever order it needs.

import { CallgateError } from '@callgate/protocol';
import type { PoolClient } from 'pg';

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
      'runs, calls, approvals, grants, idempotency keys, ledger records and head, checkpoints, openings, meta, api keys',
    sql: `
      CREATE TABLE runs (
        run_id        TEXT PRIMARY KEY,
        principal     TEXT NOT NULL,
        framework     TEXT NOT NULL,
        labels        TEXT NOT NULL,
        parent_run_id TEXT,
        status        TEXT NOT NULL,
        started_at    BIGINT NOT NULL,
        ended_at      BIGINT
      );
      CREATE INDEX runs_by_start ON runs (started_at DESC, run_id DESC);

      -- position order is decision order: an update of an attempt keeps its row (and place).
      CREATE TABLE calls (
        position         BIGSERIAL PRIMARY KEY,
        run_id           TEXT NOT NULL,
        call_id          TEXT NOT NULL,
        attempt          INTEGER NOT NULL,
        minted           BOOLEAN NOT NULL,
        tool             TEXT NOT NULL,
        arguments_digest TEXT,
        decision         TEXT NOT NULL,
        rules            TEXT NOT NULL,
        approval_id      TEXT,
        idempotency_key  TEXT,
        outcome          TEXT,
        decided_at       BIGINT NOT NULL,
        ended_at         BIGINT,
        UNIQUE (run_id, call_id, attempt)
      );

      CREATE TABLE approvals (
        position         BIGSERIAL UNIQUE,
        id               TEXT PRIMARY KEY,
        run_id           TEXT NOT NULL,
        call_id          TEXT NOT NULL,
        tool             TEXT NOT NULL,
        arguments        TEXT,
        arguments_digest TEXT NOT NULL,
        rules            TEXT NOT NULL,
        reason           TEXT NOT NULL,
        status           TEXT NOT NULL,
        created_at       BIGINT NOT NULL,
        expires_at       BIGINT NOT NULL,
        resolved_at      BIGINT,
        reviewer         TEXT,
        response_reason  TEXT,
        edited           BOOLEAN
      );
      CREATE INDEX approvals_by_status ON approvals (status, created_at, position);
      CREATE INDEX approvals_by_run ON approvals (run_id, created_at, position);
      CREATE INDEX approvals_by_creation ON approvals (created_at, position);

      -- position order is creation order ("in the order they were put" for findGrants).
      CREATE TABLE grants (
        position         BIGSERIAL PRIMARY KEY,
        token_hash       TEXT NOT NULL UNIQUE,
        v                INTEGER NOT NULL,
        run_id           TEXT NOT NULL,
        call_id          TEXT NOT NULL,
        tool             TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        expires_at       BIGINT NOT NULL,
        consumed_at      BIGINT
      );
      CREATE INDEX grants_by_binding ON grants (tool, arguments_digest);

      CREATE TABLE idempotency_keys (
        tool    TEXT NOT NULL,
        key     TEXT NOT NULL,
        call_id TEXT NOT NULL,
        PRIMARY KEY (tool, key)
      );

      -- seq is the record's Merkle leaf index, consecutive from 0.
      CREATE TABLE records (
        seq       BIGINT PRIMARY KEY,
        run_id    TEXT NOT NULL,
        run_seq   INTEGER NOT NULL,
        type      TEXT NOT NULL,
        canonical TEXT NOT NULL,
        leaf_hash BYTEA NOT NULL,
        digest    TEXT NOT NULL,
        UNIQUE (run_id, run_seq)
      );

      -- The log's one sequencer row: its size and RFC 9162 frontier (perfect subtree roots,
      -- leftmost first), updated in the transaction of every append. Appends lock this row, so
      -- they are serialised across replicas; nothing else is.
      CREATE TABLE ledger_head (
        id       INTEGER PRIMARY KEY CHECK (id = 1),
        size     BIGINT NOT NULL,
        frontier BYTEA[] NOT NULL
      );
      INSERT INTO ledger_head (id, size, frontier) VALUES (1, 0, '{}');

      CREATE TABLE checkpoints (
        size BIGINT PRIMARY KEY,
        root BYTEA NOT NULL,
        note TEXT NOT NULL,
        ts   BIGINT NOT NULL
      );

      CREATE TABLE openings (
        commitment TEXT PRIMARY KEY,
        salt       TEXT NOT NULL,
        value      TEXT NOT NULL
      );

      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );

      CREATE TABLE api_keys (
        position   BIGSERIAL PRIMARY KEY,
        key_hash   TEXT NOT NULL UNIQUE,
        name       TEXT NOT NULL,
        role       TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
      );
      CREATE UNIQUE INDEX api_keys_live_name ON api_keys (name) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 2,
    description: 'approval hand-outs (grant and arguments of an answered approval) and web UI sessions',
    sql: `
      -- What an approved call's waiter receives, whichever replica the answer reached: kept
      -- until the grant expires.
      CREATE TABLE approval_handouts (
        approval_id TEXT PRIMARY KEY,
        state       TEXT NOT NULL,
        expires_at  BIGINT NOT NULL
      );
      CREATE INDEX approval_handouts_by_expiry ON approval_handouts (expires_at);

      -- Web UI sessions, so that a reviewer stays signed in when the replica that signed them in
      -- is gone. id_hash is the SHA-256 of the session id (the cookie); never the id itself.
      CREATE TABLE ui_sessions (
        id_hash      TEXT PRIMARY KEY,
        session      TEXT NOT NULL,
        created_at   BIGINT NOT NULL,
        last_seen_at BIGINT NOT NULL
      );
      CREATE INDEX ui_sessions_by_use ON ui_sessions (last_seen_at);
    `,
  },
  {
    version: 3,
    description: 'the values a framework injects into an asked call (Approval.injected)',
    sql: `
      -- RFC 8785 JSON of Approval.injected; NULL when the framework injects nothing.
      ALTER TABLE approvals ADD COLUMN injected TEXT;
    `,
  },
];

/** The schema version this code writes: the last migration's. */
export const SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

/**
 * Creates `schema` (the connection's `search_path`; a checked name) when missing and brings it to {@link SCHEMA_VERSION}: every missing
 * migration, in one transaction under an advisory lock (`lockKey`), so replicas opening one new
 * database at once apply each migration exactly once. `now` stamps `applied_at` (epoch ms).
 *
 * @returns the versions applied, in order (empty when the database was current).
 * @throws CallgateError `internal` when the database is at a newer version than this code knows.
 */
export async function migrate(
  client: PoolClient,
  schema: string,
  lockKey: string,
  now: () => number = Date.now,
): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    // The connection resolved its search_path before the schema existed: resolve it again.
    await client.query(`SET search_path TO ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version     INTEGER PRIMARY KEY,
      description TEXT NOT NULL,
      applied_at  BIGINT NOT NULL
    )`);
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM schema_migrations',
    );
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION)
      throw new CallgateError(
        'internal',
        `the PostgreSQL schema is at version ${current}, newer than this callgate knows (${SCHEMA_VERSION}); upgrade callgate`,
      );
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(migration.sql);
      await client.query(
        'INSERT INTO schema_migrations (version, description, applied_at) VALUES ($1, $2, $3)',
        [migration.version, migration.description, now()],
      );
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
