// Approvals across replicas through PostgreSQL LISTEN/NOTIFY: a replica that creates or resolves
// an approval notifies the others (the payload names the approval, the rows hold the rest), and
// an approved approval's hand-out (grant and arguments to run) is kept in `approval_handouts`
// until the grant expires, so a waiter on any replica receives the grant whichever replica the
// reviewer's answer reached.
import type { ApprovalChannel, ApprovalEvent, ApprovalHandout, Logger } from '@callgate/core';
import { silentLogger } from '@callgate/core';
import { randomBytes } from '@callgate/core/crypto';
import pg from 'pg';
import type { PostgresStore } from './postgres-store.js';

/** How often a lost notification connection is reopened, in ms. */
const RECONNECT_MS = 500;
/** Hand-outs are deleted this long after their grant expired, in ms. */
const HANDOUT_GRACE_MS = 60_000;

/** A notification's payload: the approval's id and, when it fits, the whole event. */
interface Notice {
  id: string;
  from: string;
  event?: ApprovalEvent;
}

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; larger events go by id only. */
const PAYLOAD_LIMIT = 7900;

/**
 * The PostgreSQL {@link ApprovalChannel}. One LISTEN connection per replica; notifications are
 * delivered after the publishing statement commits, so the rows they name are visible.
 *
 * The hand-out holds the grant's token in the database for the grant's lifetime (60 s by
 * default): whoever can read the database could use it within that time. Whoever can write the
 * database can approve calls anyway; protect the database as the gate itself.
 */
export class PostgresApprovalChannel implements ApprovalChannel {
  readonly #store: PostgresStore;
  readonly #logger: Logger;
  readonly #channel: string;
  /** This replica's id: its own notifications are not delivered back to it. */
  readonly #self = randomBytes(8).toString('hex');
  readonly #listeners = new Set<(event: ApprovalEvent) => void>();
  #client: pg.Client | undefined;
  #closed = false;
  #reconnect: NodeJS.Timeout | undefined;
  #lastCleanup = 0;
  #connected: Promise<void> | undefined;

  constructor(store: PostgresStore, options: { logger?: Logger } = {}) {
    this.#store = store;
    this.#logger = options.logger ?? silentLogger;
    this.#channel = `callgate_approvals_${store.schema}`;
    store.onClose(() => this.close());
  }

  /**
   * Opens the LISTEN connection. Resolves once listening.
   * @throws the connection's error when PostgreSQL cannot be reached.
   */
  async start(): Promise<void> {
    this.#connected ??= this.#listen();
    await this.#connected;
  }

  /** True while the LISTEN connection is open. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  async #listen(): Promise<void> {
    const client = new pg.Client(this.#store.clientConfig);
    client.on('notification', (message) => {
      if (message.channel === this.#channel && message.payload) this.#notified(message.payload);
    });
    const lost = (error: unknown) => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(() => {});
      if (this.#closed) return;
      this.#logger.warn({ error: String(error) }, 'approval notifications lost; reconnecting');
      this.#scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
    await client.connect();
    await client.query(`LISTEN ${this.#channel}`);
    this.#client = client;
  }

  #scheduleReconnect(): void {
    if (this.#reconnect !== undefined || this.#closed) return;
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined;
      this.#listen().catch(() => this.#scheduleReconnect());
    }, RECONNECT_MS);
    this.#reconnect.unref();
  }

  #notified(payload: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (notice.from === this.#self || typeof notice.id !== 'string') return;
    if (notice.event?.approval?.id === notice.id) {
      this.#dispatch(notice.event);
      return;
    }
    this.#deliver(notice.id).catch((error) =>
      this.#logger.warn(
        { approval_id: notice.id, error: String(error) },
        'approval notification not delivered',
      ),
    );
  }

  async #deliver(approvalId: string): Promise<void> {
    const approval = await this.#store.getApproval(approvalId);
    if (approval === undefined) return;
    const handout = approval.status === 'approved' ? await this.handout(approvalId) : undefined;
    this.#dispatch({ approval, ...handout });
  }

  #dispatch(event: ApprovalEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#logger.warn({ error: String(error) }, 'approval channel listener failed');
      }
    }
  }

  async publish(event: ApprovalEvent): Promise<void> {
    // The whole event when it fits (the receiver then reads nothing), else the id.
    const whole = JSON.stringify({ id: event.approval.id, from: this.#self, event } satisfies Notice);
    const notice =
      Buffer.byteLength(whole) < PAYLOAD_LIMIT
        ? whole
        : JSON.stringify({ id: event.approval.id, from: this.#self } satisfies Notice);
    const pool = this.#store.pool;
    if (event.grant !== undefined) {
      const state: ApprovalHandout = {
        grant: event.grant,
        ...(event.arguments ? { arguments: event.arguments } : {}),
      };
      // One statement: the hand-out commits together with the notification that names it.
      await pool.query(
        `WITH kept AS (
           INSERT INTO approval_handouts (approval_id, state, expires_at) VALUES ($1, $2, $3)
           ON CONFLICT (approval_id) DO NOTHING
         ) SELECT pg_notify($4, $5)`,
        [event.approval.id, JSON.stringify(state), event.grant.expires_at, this.#channel, notice],
      );
      await this.#cleanup(Date.now());
    } else {
      await pool.query('SELECT pg_notify($1, $2)', [this.#channel, notice]);
    }
  }

  async #cleanup(now: number): Promise<void> {
    if (now - this.#lastCleanup < HANDOUT_GRACE_MS) return;
    this.#lastCleanup = now;
    await this.#store.pool.query('DELETE FROM approval_handouts WHERE expires_at < $1', [
      now - HANDOUT_GRACE_MS,
    ]);
  }

  subscribe(listener: (event: ApprovalEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async handout(approvalId: string): Promise<ApprovalHandout | undefined> {
    const { rows } = await this.#store.pool.query<{ state: string }>(
      'SELECT state FROM approval_handouts WHERE approval_id = $1 AND expires_at > $2',
      [approvalId, Date.now()],
    );
    const row = rows[0];
    return row === undefined ? undefined : (JSON.parse(row.state) as ApprovalHandout);
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnect);
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await client.end().catch(() => {});
  }
}
