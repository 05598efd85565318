// Signed-in web UI sessions in PostgreSQL, so that a reviewer stays signed in when the replica
// that signed them in is gone (the server's `SessionBacking`). Rows are keyed by the SHA-256 of
// the session id; the id (the cookie) itself is never stored.
import type { PostgresStore } from './postgres-store.js';

/** A session as kept: everything but its id (the server's `Session` without `id`). */
export interface StoredUiSession {
  csrf: string;
  key?: { name: string; role: 'agent' | 'reviewer' | 'admin'; key_hash: string };
  createdAt: number;
  lastSeenAt: number;
  flash?: { kind: 'ok' | 'error'; message: string };
}

/** Rows older than this (epoch ms since their last use) are deleted: the UI's absolute limit. */
const SESSION_ROW_LIFETIME_MS = 24 * 3600_000;

/** Keeps signed-in UI sessions in the store's `ui_sessions` table. */
export class PostgresSessionBacking {
  readonly #store: PostgresStore;
  #lastCleanup = 0;

  constructor(store: PostgresStore) {
    this.#store = store;
  }

  async load(idHash: string): Promise<StoredUiSession | undefined> {
    const { rows } = await this.#store.pool.query<{ session: string }>(
      'SELECT session FROM ui_sessions WHERE id_hash = $1',
      [idHash],
    );
    const row = rows[0];
    return row === undefined ? undefined : (JSON.parse(row.session) as StoredUiSession);
  }

  async save(idHash: string, session: StoredUiSession): Promise<void> {
    await this.#store.pool.query(
      `INSERT INTO ui_sessions (id_hash, session, created_at, last_seen_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id_hash) DO UPDATE SET session = excluded.session, last_seen_at = excluded.last_seen_at`,
      [idHash, JSON.stringify(session), session.createdAt, session.lastSeenAt],
    );
    const now = Date.now();
    if (now - this.#lastCleanup > 60_000) {
      this.#lastCleanup = now;
      await this.#store.pool.query('DELETE FROM ui_sessions WHERE last_seen_at < $1', [
        now - SESSION_ROW_LIFETIME_MS,
      ]);
    }
  }

  async delete(idHash: string): Promise<void> {
    await this.#store.pool.query('DELETE FROM ui_sessions WHERE id_hash = $1', [idHash]);
  }
}
