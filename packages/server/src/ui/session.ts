import { createHmac } from 'node:crypto';
import { type ApiKeyRow, constantTimeEqual, randomBytes } from '@callgate/core';

/** A browser session, kept only on the server; the cookie holds nothing but its random id. */
export interface Session {
  id: string;
  /** The CSRF token every form of this session must send back. */
  csrf: string;
  /** The signed-in key (reviewer or admin); absent before sign-in. */
  key?: Pick<ApiKeyRow, 'name' | 'role' | 'key_hash'>;
  createdAt: number;
  lastSeenAt: number;
  /** A one-time message for the next page (e.g. "approval … approved"). */
  flash?: { kind: 'ok' | 'error' | 'approved' | 'denied'; message: string };
}

/** Options of {@link SessionStore}; durations in ms. */
export interface SessionStoreOptions {
  clock: () => number;
  /** Key from which CSRF tokens are derived; default 32 random bytes per process. */
  secret?: string | Uint8Array;
  /** A session unused this long ends. Default 8 h. */
  idleMs?: number;
  /** A session ends this long after sign-in whatever its use. Default 24 h. */
  absoluteMs?: number;
  /** Most sessions kept; the least recently used go first. Default 10,000. */
  maxSessions?: number;
}

/** Name of the session cookie. */
export const SESSION_COOKIE = 'callgate_session';

/**
 * Server-side sessions of the web UI. Ids are 256 random bits; CSRF tokens are
 * HMAC-SHA256(secret, id), compared in constant time. Signing in replaces the session (new id
 * and token) so an id planted before sign-in is worthless after it.
 */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #clock: () => number;
  readonly #secret: string | Uint8Array;
  readonly #idleMs: number;
  readonly #absoluteMs: number;
  readonly #maxSessions: number;

  constructor(options: SessionStoreOptions) {
    this.#clock = options.clock;
    this.#secret = options.secret ?? randomBytes(32);
    this.#idleMs = options.idleMs ?? 8 * 3600_000;
    this.#absoluteMs = options.absoluteMs ?? 24 * 3600_000;
    this.#maxSessions = options.maxSessions ?? 10_000;
  }

  /** Sessions currently kept. */
  get size(): number {
    return this.#sessions.size;
  }

  #mint(): Session {
    const id = randomBytes(32).toString('base64url');
    const now = this.#clock();
    const session: Session = { id, csrf: this.#csrfOf(id), createdAt: now, lastSeenAt: now };
    this.#sessions.set(id, session);
    if (this.#sessions.size > this.#maxSessions) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    return session;
  }

  #csrfOf(id: string): string {
    return createHmac('sha256', this.#secret).update(`csrf:${id}`).digest('base64url');
  }

  /** A new anonymous session (for the sign-in form's CSRF token). */
  create(): Session {
    return this.#mint();
  }

  /** The live session with this id, refreshed; undefined when unknown or expired. */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    const now = this.#clock();
    if (now - session.lastSeenAt > this.#idleMs || now - session.createdAt > this.#absoluteMs) {
      this.#sessions.delete(id);
      return undefined;
    }
    session.lastSeenAt = now;
    // Re-insert so the map's order is least recently used first.
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    return session;
  }

  /** Ends `previous` (if any) and starts a signed-in session for `key`. */
  signIn(previous: Session | undefined, key: ApiKeyRow): Session {
    if (previous) this.#sessions.delete(previous.id);
    const session = this.#mint();
    session.key = { name: key.name, role: key.role, key_hash: key.key_hash };
    return session;
  }

  /** Ends a session. */
  destroy(id: string): void {
    this.#sessions.delete(id);
  }

  /** True when `token` is this session's CSRF token. */
  checkCsrf(session: Session, token: unknown): boolean {
    return typeof token === 'string' && constantTimeEqual(session.csrf, token);
  }
}
