import type {
  ApiKeyRow,
  ApprovalQuery,
  ApprovalResolution,
  CallRow,
  CheckpointRow,
  Logger,
  RunHead,
  RunRow,
  Store,
  StoredRecord,
} from '@callgate/core';
import { silentLogger } from '@callgate/core';
import { canonicalJson } from '@callgate/core/crypto';
import type { Approval, LedgerRecord, Opening, StoredGrant } from '@callgate/protocol';
import { CallgateError } from '@callgate/protocol';
import pg from 'pg';
import {
  checkSchemaName,
  clientConfig,
  describeUrl,
  durabilityOf,
  type PostgresStoreOptions,
  storeError,
} from './database.js';
import {
  API_KEY_COLUMNS,
  APPROVAL_COLUMNS,
  apiKeyValues,
  approvalValues,
  CALL_COLUMNS,
  callValues,
  GRANT_COLUMNS,
  grantValues,
  parameters,
  RUN_COLUMNS,
  rowToApiKey,
  rowToApproval,
  rowToCall,
  rowToCheckpoint,
  rowToGrant,
  rowToOpening,
  rowToRun,
  runValues,
} from './rows.js';
import { migrate } from './schema.js';
import {
  insertCheckpoint,
  insertRecords,
  literal,
  lockHead,
  PostgresSequencer,
  script,
  transaction,
  upsertCallText,
} from './sequencer.js';

/**
 * The {@link Store} several callgate servers share: PostgreSQL through `pg` (node-postgres).
 *
 * Every write is its own statement (or transaction) and resolves once PostgreSQL committed it,
 * so an acknowledged record survives the crash of any server (and, with `synchronous_commit =
 * on`, PostgreSQL's). `resolveApproval` and `consumeGrant` are single conditional UPDATEs: of any
 * number of concurrent callers, on any server, exactly one sees the row still pending. The log's
 * positions, run chains and Merkle frontier are assigned in PostgreSQL transactions by
 * {@link PostgresStore.sequencer}, and its checkpoint lease is an advisory lock.
 *
 * Errors: an unreachable database rejects with CallgateError `gate-unavailable` naming it; a
 * duplicate run, approval, grant or live API key name, or an out-of-order append, with `conflict`;
 * a second checkpoint of one size with another root with `ledger-invalid`.
 */
export class PostgresStore implements Store {
  /** What an acknowledged write survives (see {@link durabilityOf}); read from the server at open. */
  synchronous: 'NORMAL' | 'FULL' = 'FULL';
  readonly sequencer: PostgresSequencer;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The pool every query goes through (other parts of the store, e.g. notifications, share it). */
  readonly pool: pg.Pool;
  readonly #where: string;
  readonly #logger: Logger;
  readonly #config: pg.ClientConfig;
  #closed = false;
  #appends: Promise<void> = Promise.resolve();
  /** Connections of other parts (e.g. notifications) to end with the store. */
  readonly #closers = new Set<() => Promise<void>>();

  private constructor(pool: pg.Pool, options: PostgresStoreOptions, schema: string, config: pg.ClientConfig) {
    this.pool = pool;
    this.schema = schema;
    this.#config = config;
    this.#where = describeUrl(options.url);
    this.#logger = options.logger ?? silentLogger;
    this.sequencer = new PostgresSequencer({
      pool,
      clientConfig: config,
      leaseKey: `callgate:${schema}:checkpoint-lease`,
      logger: this.#logger,
      mapError: (error) => this.#error(error),
    });
  }

  /**
   * Connects, creates the schema when missing and migrates it to the current version.
   * @throws CallgateError `gate-unavailable` when PostgreSQL cannot be reached (the message names
   *   host, port and database), `request-invalid` for a bad schema name, `internal` when the
   *   database is at a newer schema version than this code knows.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = checkSchemaName(options.schema ?? 'callgate');
    const config = clientConfig(options, schema);
    const pool = new pg.Pool({ ...config, max: options.maxConnections ?? 10, idleTimeoutMillis: 30_000 });
    const logger = options.logger ?? silentLogger;
    pool.on('error', (error) => logger.warn({ error: String(error) }, 'idle PostgreSQL connection failed'));
    const store = new PostgresStore(pool, options, schema, config);
    try {
      const client = await pool.connect();
      try {
        await migrate(client, schema, `callgate:${schema}:migrations`);
        const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
        store.synchronous = durabilityOf(rows[0]?.synchronous_commit);
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => {});
      throw store.#error(error);
    }
    return store;
  }

  /** Settings of a new dedicated connection to this store's schema (e.g. for LISTEN). */
  get clientConfig(): pg.ClientConfig {
    return this.#config;
  }

  /** Where the store is (URL without password), for messages. */
  get where(): string {
    return this.#where;
  }

  #error(error: unknown, conflict?: string): unknown {
    return storeError(error, this.#where, conflict);
  }

  async #query(text: string, values: unknown[] = [], conflict?: string): Promise<pg.QueryResult> {
    if (this.#closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      return await this.pool.query(text, values);
    } catch (error) {
      throw this.#error(error, conflict);
    }
  }

  /** True when PostgreSQL answers a trivial query within `timeoutMs`. */
  async ping(timeoutMs = 2000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      });
      await Promise.race([this.#query('SELECT 1'), timeout]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async createRun(run: RunRow): Promise<void> {
    await this.#query(
      `INSERT INTO runs (${RUN_COLUMNS}) VALUES (${parameters(RUN_COLUMNS)})`,
      runValues(run),
      `run ${run.run_id} exists`,
    );
  }
  async getRun(runId: string): Promise<RunRow | undefined> {
    const { rows } = await this.#query(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`, [runId]);
    return rows[0] && rowToRun(rows[0]);
  }
  async listRuns(options: { limit?: number; before?: number } = {}): Promise<RunRow[]> {
    const { limit = 100, before } = options;
    const { rows } =
      before === undefined
        ? await this.#query(
            `SELECT ${RUN_COLUMNS} FROM runs ORDER BY started_at DESC, run_id DESC LIMIT $1`,
            [limit],
          )
        : await this.#query(
            `SELECT ${RUN_COLUMNS} FROM runs WHERE started_at < $1 ORDER BY started_at DESC, run_id DESC LIMIT $2`,
            [before, limit],
          );
    return rows.map(rowToRun);
  }
  async endRun(runId: string, status: RunRow['status'], endedAt: number): Promise<void> {
    await this.#query('UPDATE runs SET status = $1, ended_at = $2 WHERE run_id = $3', [
      status,
      endedAt,
      runId,
    ]);
  }

  /**
   * Upserts the call's row in the transaction of the ledger's next append (see
   * {@link PostgresSequencer.defer}): a decided call is durable together with its records.
   */
  async putCall(call: CallRow): Promise<void> {
    if (this.#closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    await this.sequencer.defer(upsertCallText(callValues(call)));
  }
  async listCalls(runId: string): Promise<CallRow[]> {
    const { rows } = await this.#query(
      `SELECT ${CALL_COLUMNS} FROM calls WHERE run_id = $1 ORDER BY position`,
      [runId],
    );
    return rows.map(rowToCall);
  }
  async getCall(runId: string, callId: string): Promise<CallRow | undefined> {
    const { rows } = await this.#query(
      `SELECT ${CALL_COLUMNS} FROM calls WHERE run_id = $1 AND call_id = $2 ORDER BY attempt DESC LIMIT 1`,
      [runId, callId],
    );
    return rows[0] && rowToCall(rows[0]);
  }

  /**
   * Inserts the approval in the transaction of the ledger's next append (its `approval-request`
   * record): an approval is never durable without its record.
   * @throws CallgateError `conflict` when an approval with its id exists.
   */
  async createApproval(approval: Approval): Promise<void> {
    if (this.#closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    await this.sequencer.defer(
      `INSERT INTO approvals (${APPROVAL_COLUMNS}) VALUES (${approvalValues(approval).map(literal).join(', ')})
       ON CONFLICT (id) DO NOTHING`,
      `approval ${approval.id} exists`,
    );
  }
  async getApproval(approvalId: string): Promise<Approval | undefined> {
    const { rows } = await this.#query(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`, [
      approvalId,
    ]);
    return rows[0] && rowToApproval(rows[0]);
  }
  async listApprovals(query: ApprovalQuery = {}): Promise<Approval[]> {
    const { status, run_id: runId, limit = 1000 } = query;
    const conditions: string[] = [];
    const values: unknown[] = [];
    if (status !== undefined) {
      values.push(status);
      conditions.push(`status = $${values.length}`);
    }
    if (runId !== undefined) {
      values.push(runId);
      conditions.push(`run_id = $${values.length}`);
    }
    values.push(limit);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const { rows } = await this.#query(
      `SELECT ${APPROVAL_COLUMNS} FROM approvals ${where} ORDER BY created_at, position LIMIT $${values.length}`,
      values,
    );
    return rows.map(rowToApproval);
  }
  /**
   * Moves a pending approval to its final state with one conditional UPDATE (atomic across every
   * server). Fields of `update` left undefined keep their stored values.
   * @throws RangeError when `update.status` is `pending`.
   */
  async resolveApproval(approvalId: string, update: ApprovalResolution): Promise<Approval | undefined> {
    if ((update.status as string) === 'pending')
      throw new RangeError('an approval cannot be resolved to pending');
    const { rows } = await this.#query(
      `UPDATE approvals SET status = $2, resolved_at = $3,
         reviewer = coalesce($4, reviewer),
         response_reason = coalesce($5, response_reason),
         edited = coalesce($6, edited)
       WHERE id = $1 AND status = 'pending'
       RETURNING ${APPROVAL_COLUMNS}`,
      [
        approvalId,
        update.status,
        update.resolved_at ?? null,
        update.reviewer ?? null,
        update.response_reason ?? null,
        update.edited ?? null,
      ],
    );
    return rows[0] && rowToApproval(rows[0]);
  }

  /**
   * Stores a new grant, committed without waiting for the WAL flush (`synchronous_commit = off`
   * for this transaction only): losing a grant to PostgreSQL's own crash can only refuse a call
   * (its consume finds nothing), never let one run, so a grant need not pay a flush. Consuming a
   * grant stays fully durable.
   * @throws CallgateError `conflict` when a grant with its token hash exists.
   */
  async putGrant(grant: StoredGrant): Promise<void> {
    if (this.#closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      await script(
        this.pool,
        `BEGIN; SET LOCAL synchronous_commit = off;
         INSERT INTO grants (${GRANT_COLUMNS}) VALUES (${grantValues(grant).map(literal).join(', ')});
         COMMIT`,
      );
    } catch (error) {
      throw this.#error(error, 'a grant with this token hash exists');
    }
  }
  /** One conditional UPDATE: of many concurrent consumers, on any server, exactly one gets the grant. */
  async consumeGrant(tokenHash: string, now: number): Promise<StoredGrant | undefined> {
    const { rows } = await this.#query(
      `UPDATE grants SET consumed_at = $1
       WHERE token_hash = $2 AND consumed_at IS NULL AND expires_at > $1
       RETURNING ${GRANT_COLUMNS}`,
      [now, tokenHash],
    );
    return rows[0] && rowToGrant({ ...rows[0], consumed_at: null });
  }
  async grantConsumed(binding: {
    run_id: string;
    call_id: string;
    tool: string;
    arguments_digest: string;
  }): Promise<boolean> {
    const { rows } = await this.#query(
      `SELECT 1 FROM grants
       WHERE run_id = $1 AND call_id = $2 AND tool = $3 AND arguments_digest = $4 AND consumed_at IS NOT NULL
       LIMIT 1`,
      [binding.run_id, binding.call_id, binding.tool, binding.arguments_digest],
    );
    return rows.length > 0;
  }
  async findGrants(query: {
    tool: string;
    arguments_digest: string;
    run_id?: string;
    now: number;
  }): Promise<StoredGrant[]> {
    const { rows } =
      query.run_id === undefined
        ? await this.#query(
            `SELECT ${GRANT_COLUMNS} FROM grants
             WHERE tool = $1 AND arguments_digest = $2 AND consumed_at IS NULL AND expires_at > $3 ORDER BY position`,
            [query.tool, query.arguments_digest, query.now],
          )
        : await this.#query(
            `SELECT ${GRANT_COLUMNS} FROM grants
             WHERE tool = $1 AND arguments_digest = $2 AND run_id = $3 AND consumed_at IS NULL AND expires_at > $4
             ORDER BY position`,
            [query.tool, query.arguments_digest, query.run_id, query.now],
          );
    return rows.map(rowToGrant);
  }

  async getIdempotencyKey(tool: string, key: string): Promise<string | undefined> {
    const { rows } = await this.#query('SELECT call_id FROM idempotency_keys WHERE tool = $1 AND key = $2', [
      tool,
      key,
    ]);
    return rows[0]?.call_id as string | undefined;
  }
  async putIdempotencyKey(tool: string, key: string, callId: string): Promise<void> {
    await this.#query(
      `INSERT INTO idempotency_keys (tool, key, call_id) VALUES ($1, $2, $3)
       ON CONFLICT (tool, key) DO UPDATE SET call_id = excluded.call_id`,
      [tool, key, callId],
    );
  }

  /**
   * Appends records built elsewhere (their `seq` already set), all or none, in one transaction
   * holding the log's head row: the batch must start at the log's size and be consecutive.
   * Engines sharing the log append through {@link sequencer} instead.
   * @throws CallgateError `conflict` for a batch out of order or a (run_id, run_seq) already stored.
   */
  appendRecords(records: StoredRecord[]): Promise<void> {
    // Batches go to PostgreSQL in call order (each must start where the previous ended).
    const append = this.#appends.then(() => this.#appendNow(records));
    this.#appends = append.catch(() => {});
    return append;
  }
  async #appendNow(records: StoredRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.#closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      await transaction(this.pool, async (client) => {
        const range = await lockHead(client);
        for (const [index, stored] of records.entries()) {
          if (stored.record.seq !== range.size)
            throw new CallgateError(
              'conflict',
              `append out of order: seq ${stored.record.seq}, log size ${range.size - index}`,
              { seq: stored.record.seq },
            );
          range.append(stored.leaf_hash);
        }
        await insertRecords(client, records, range);
      });
    } catch (error) {
      if (error instanceof CallgateError) throw error;
      throw this.#error(error, 'a record with this run_id and run_seq exists');
    }
  }
  async ledgerSize(): Promise<number> {
    const { rows } = await this.#query('SELECT size FROM ledger_head WHERE id = 1');
    return (rows[0]?.size as number | undefined) ?? 0;
  }
  async readRecords(from: number, to: number): Promise<LedgerRecord[]> {
    const { rows } = await this.#query(
      'SELECT canonical FROM records WHERE seq >= $1 AND seq < $2 ORDER BY seq',
      [from, to],
    );
    return rows.map((row) => JSON.parse(row.canonical as string) as LedgerRecord);
  }
  async readRunRecords(runId: string): Promise<LedgerRecord[]> {
    const { rows } = await this.#query('SELECT canonical FROM records WHERE run_id = $1 ORDER BY run_seq', [
      runId,
    ]);
    return rows.map((row) => JSON.parse(row.canonical as string) as LedgerRecord);
  }
  async readLeafHashes(from: number, to: number): Promise<Uint8Array[]> {
    const { rows } = await this.#query(
      'SELECT leaf_hash FROM records WHERE seq >= $1 AND seq < $2 ORDER BY seq',
      [from, to],
    );
    return rows.map((row) => new Uint8Array(row.leaf_hash as Buffer));
  }
  async runHead(runId: string): Promise<RunHead | undefined> {
    const { rows } = await this.#query(
      'SELECT run_seq, digest FROM records WHERE run_id = $1 ORDER BY run_seq DESC LIMIT 1',
      [runId],
    );
    const row = rows[0];
    return row && { run_seq: row.run_seq as number, digest: row.digest as string };
  }

  async putCheckpoint(checkpoint: CheckpointRow): Promise<void> {
    if (this.#closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      await insertCheckpoint(this.pool, checkpoint);
    } catch (error) {
      throw error instanceof CallgateError ? error : this.#error(error);
    }
  }
  async latestCheckpoint(): Promise<CheckpointRow | undefined> {
    const { rows } = await this.#query(
      'SELECT size, root, note, ts FROM checkpoints ORDER BY size DESC LIMIT 1',
    );
    return rows[0] && rowToCheckpoint(rows[0]);
  }
  async listCheckpoints(fromSize: number, toSize: number): Promise<CheckpointRow[]> {
    const { rows } = await this.#query(
      'SELECT size, root, note, ts FROM checkpoints WHERE size >= $1 AND size <= $2 ORDER BY size',
      [fromSize, toSize],
    );
    return rows.map(rowToCheckpoint);
  }

  async putOpenings(openings: Opening[]): Promise<void> {
    if (openings.length === 0) return;
    await this.#query(
      `INSERT INTO openings (commitment, salt, value)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
       ON CONFLICT (commitment) DO UPDATE SET salt = excluded.salt, value = excluded.value`,
      [
        openings.map((opening) => opening.commitment),
        openings.map((opening) => opening.salt),
        openings.map((opening) => canonicalJson(opening.value)),
      ],
    );
  }
  async getOpenings(commitments: string[]): Promise<Opening[]> {
    if (commitments.length === 0) return [];
    const { rows } = await this.#query(
      'SELECT commitment, salt, value FROM openings WHERE commitment = ANY($1::text[])',
      [commitments],
    );
    const found = new Map(rows.map((row) => [row.commitment as string, rowToOpening(row)]));
    return commitments.flatMap((commitment) => {
      const opening = found.get(commitment);
      return opening ? [opening] : [];
    });
  }

  async putApiKey(key: ApiKeyRow): Promise<void> {
    await this.#query(
      `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (${parameters(API_KEY_COLUMNS)})`,
      apiKeyValues(key),
      `an API key named ${key.name} (or with this hash) exists`,
    );
  }
  async getApiKey(keyHash: string): Promise<ApiKeyRow | undefined> {
    const { rows } = await this.#query(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`, [
      keyHash,
    ]);
    return rows[0] && rowToApiKey(rows[0]);
  }
  async listApiKeys(): Promise<ApiKeyRow[]> {
    const { rows } = await this.#query(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, position`,
    );
    return rows.map(rowToApiKey);
  }
  async revokeApiKey(name: string, revokedAt: number): Promise<boolean> {
    const result = await this.#query(
      'UPDATE api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL',
      [revokedAt, name],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async getMeta(key: string): Promise<string | undefined> {
    const { rows } = await this.#query('SELECT value FROM meta WHERE key = $1', [key]);
    return rows[0]?.value as string | undefined;
  }
  async setMeta(key: string, value: string): Promise<void> {
    await this.#query(
      'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [key, value],
    );
  }

  /** Registers `close` to run when the store closes (a dedicated connection of another part). */
  onClose(close: () => Promise<void>): void {
    this.#closers.add(close);
  }

  /** Gives up the checkpoint lease and closes every connection. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const close of this.#closers) await close().catch(() => {});
    await this.sequencer.releaseLease();
    await this.pool.end();
  }
}
