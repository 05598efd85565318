import { createHash, createHmac } from 'node:crypto';
import type { ApiKeyRow } from '@callgate/core';
import { constantTimeEqual, randomBytes } from '@callgate/core/crypto';

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

/**
 * Where signed-in sessions are kept besides this process (e.g. the database several replicas
 * share), so that a reviewer stays signed in when the replica that signed them in is gone.
 * Keyed by the session id's SHA-256 (hex); the id itself is never stored. Anonymous (sign-in
 * form) sessions stay in process.
 */
export interface SessionBacking {
  load(idHash: string): Promise<Omit<Session, 'id'> | undefined>;
  save(idHash: string, session: Omit<Session, 'id'>): Promise<void>;
  delete(idHash: string): Promise<void>;
}

/** The SHA-256 (hex) of a session id: what a {@link SessionBacking} keys sessions by. */
export const sessionIdHash = (id: string): string => createHash('sha256').update(id).digest('hex');

/** Options of {@link SessionStore}; durations in ms. */
export interface SessionStoreOptions {
  clock: () => number;
  /** Key from which CSRF tokens are derived; default 32 random bytes per process. */
  secret?: string | Uint8Array;
  /** A session unused this long ends. Default 8 h. */
  idleMs?: number;
  /** A session ends this long after sign-in whatever its use. Default 24 h. */
  absoluteMs?: number;
  /** Most signed-in sessions kept; the least recently used go first. Default 10,000. */
  maxSessions?: number;
  /**
   * Most anonymous sessions kept (a sign-in form's CSRF token each); the least recently used go
   * first. They are kept apart from signed-in ones, so no number of anonymous visitors evicts a
   * signed-in reviewer. Default 10,000.
   */
  maxAnonymousSessions?: number;
  /** Keeps signed-in sessions beyond this process (see {@link SessionBacking}). Default: none. */
  backing?: SessionBacking;
}

/** Name of the session cookie. */
export const SESSION_COOKIE = 'callgate_session';

/**
 * Server-side sessions of the web UI. Ids are 256 random bits; CSRF tokens are
 * HMAC-SHA256(secret, id), compared in constant time. Signing in replaces the session (new id
 * and token) so an id planted before sign-in is worthless after it. Anonymous and signed-in
 * sessions live in separate maps with separate caps: anonymous traffic only evicts anonymous
 * sessions.
 */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #anonymous = new Map<string, Session>();
  readonly #clock: () => number;
  readonly #secret: string | Uint8Array;
  readonly #idleMs: number;
  readonly #absoluteMs: number;
  readonly #maxSessions: number;
  readonly #maxAnonymous: number;
  readonly #backing: SessionBacking | undefined;
  /** Writes to the backing not yet awaited (see {@link settle}). */
  #writes: Promise<void>[] = [];

  constructor(options: SessionStoreOptions) {
    this.#backing = options.backing;
    this.#clock = options.clock;
    this.#secret = options.secret ?? randomBytes(32);
    this.#idleMs = options.idleMs ?? 8 * 3600_000;
    this.#absoluteMs = options.absoluteMs ?? 24 * 3600_000;
    this.#maxSessions = options.maxSessions ?? 10_000;
    this.#maxAnonymous = options.maxAnonymousSessions ?? 10_000;
  }

  /** Sessions currently kept (signed-in and anonymous). */
  get size(): number {
    return this.#sessions.size + this.#anonymous.size;
  }

  /** Signed-in sessions currently kept. */
  get signedInSize(): number {
    return this.#sessions.size;
  }

  #mint(key?: Session['key']): Session {
    const id = randomBytes(32).toString('base64url');
    const now = this.#clock();
    const session: Session = { id, csrf: this.#csrfOf(id), createdAt: now, lastSeenAt: now };
    if (key) session.key = key;
    const map = key ? this.#sessions : this.#anonymous;
    map.set(id, session);
    if (map.size > (key ? this.#maxSessions : this.#maxAnonymous)) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
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
    const map = this.#sessions.has(id) ? this.#sessions : this.#anonymous;
    const session = map.get(id);
    if (!session) return undefined;
    const now = this.#clock();
    if (now - session.lastSeenAt > this.#idleMs || now - session.createdAt > this.#absoluteMs) {
      map.delete(id);
      return undefined;
    }
    session.lastSeenAt = now;
    // Re-insert so the map's order is least recently used first.
    map.delete(id);
    map.set(id, session);
    return session;
  }

  /** Ends `previous` (if any) and starts a signed-in session for `key`. */
  signIn(previous: Session | undefined, key: ApiKeyRow): Session {
    if (previous) this.destroy(previous.id);
    const session = this.#mint({ name: key.name, role: key.role, key_hash: key.key_hash });
    if (this.#backing) {
      const { id, flash: _flash, ...kept } = session;
      this.#writes.push(this.#backing.save(sessionIdHash(id), kept));
    }
    return session;
  }

  /** Ends a session. */
  destroy(id: string): void {
    this.#sessions.delete(id);
    this.#anonymous.delete(id);
    if (this.#backing) this.#writes.push(this.#backing.delete(sessionIdHash(id)));
  }

  /**
   * Loads the signed-in session `id` from the backing when this process does not know it (it was
   * signed in on another replica). Call before {@link get}; a no-op without a backing.
   */
  async restore(id: string | undefined): Promise<void> {
    if (!id || !this.#backing || this.#sessions.has(id)) return;
    const kept = await this.#backing.load(sessionIdHash(id));
    if (!kept?.key || this.#sessions.has(id)) return;
    this.#sessions.set(id, { ...kept, id });
    if (this.#sessions.size > this.#maxSessions) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
  }

  /** Waits for the backing's writes made so far (sign-ins, sign-outs). @throws the backing's error. */
  async settle(): Promise<void> {
    const writes = this.#writes;
    this.#writes = [];
    await Promise.all(writes);
  }

  /** True when `token` is this session's CSRF token. */
  checkCsrf(session: Session, token: unknown): boolean {
    return typeof token === 'string' && constantTimeEqual(session.csrf, token);
  }
}
