import type { ApiKeyRow, ApprovalQuery, ApprovalResolution, CallRow, RunRow, Store } from '@callgate/core';
import { silentLogger } from '@callgate/core';
import type { Approval, StoredGrant } from '@callgate/protocol';
import { CallgateError } from '@callgate/protocol';
import pg from 'pg';
import { checkSchemaName, clientConfig, durabilityOf, type PostgresStoreOptions } from './database.js';
import { PostgresLog } from './postgres-log.js';
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
  rowToGrant,
  rowToRun,
  runValues,
} from './rows.js';
import { migrate } from './schema.js';
import { literal, script, upsertCallText } from './sequencer.js';

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
export class PostgresStore extends PostgresLog implements Store {
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
      throw store.errorOf(error);
    }
    return store;
  }

  async createRun(run: RunRow): Promise<void> {
    await this.query(
      `INSERT INTO runs (${RUN_COLUMNS}) VALUES (${parameters(RUN_COLUMNS)})`,
      runValues(run),
      `run ${run.run_id} exists`,
    );
  }
  async getRun(runId: string): Promise<RunRow | undefined> {
    const { rows } = await this.query(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`, [runId]);
    return rows[0] && rowToRun(rows[0]);
  }
  async listRuns(options: { limit?: number; before?: number } = {}): Promise<RunRow[]> {
    const { limit = 100, before } = options;
    const { rows } =
      before === undefined
        ? await this.query(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY started_at DESC, run_id DESC LIMIT $1`, [
            limit,
          ])
        : await this.query(
            `SELECT ${RUN_COLUMNS} FROM runs WHERE started_at < $1 ORDER BY started_at DESC, run_id DESC LIMIT $2`,
            [before, limit],
          );
    return rows.map(rowToRun);
  }
  async endRun(runId: string, status: RunRow['status'], endedAt: number): Promise<void> {
    await this.query('UPDATE runs SET status = $1, ended_at = $2 WHERE run_id = $3', [
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
    if (this.closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    await this.sequencer.defer(upsertCallText(callValues(call)));
  }
  async listCalls(runId: string): Promise<CallRow[]> {
    const { rows } = await this.query(
      `SELECT ${CALL_COLUMNS} FROM calls WHERE run_id = $1 ORDER BY position`,
      [runId],
    );
    return rows.map(rowToCall);
  }
  async getCall(runId: string, callId: string): Promise<CallRow | undefined> {
    const { rows } = await this.query(
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
    if (this.closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    await this.sequencer.defer(
      `INSERT INTO approvals (${APPROVAL_COLUMNS}) VALUES (${approvalValues(approval).map(literal).join(', ')})
       ON CONFLICT (id) DO NOTHING`,
      `approval ${approval.id} exists`,
    );
  }
  async getApproval(approvalId: string): Promise<Approval | undefined> {
    const { rows } = await this.query(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`, [
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
    const { rows } = await this.query(
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
    const { rows } = await this.query(
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
    if (this.closed) throw new CallgateError('internal', 'the PostgreSQL store is closed');
    try {
      await script(
        this.pool,
        `BEGIN; SET LOCAL synchronous_commit = off;
         INSERT INTO grants (${GRANT_COLUMNS}) VALUES (${grantValues(grant).map(literal).join(', ')});
         COMMIT`,
      );
    } catch (error) {
      throw this.errorOf(error, 'a grant with this token hash exists');
    }
  }
  /** One conditional UPDATE: of many concurrent consumers, on any server, exactly one gets the grant. */
  async consumeGrant(tokenHash: string, now: number): Promise<StoredGrant | undefined> {
    const { rows } = await this.query(
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
    const { rows } = await this.query(
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
        ? await this.query(
            `SELECT ${GRANT_COLUMNS} FROM grants
             WHERE tool = $1 AND arguments_digest = $2 AND consumed_at IS NULL AND expires_at > $3 ORDER BY position`,
            [query.tool, query.arguments_digest, query.now],
          )
        : await this.query(
            `SELECT ${GRANT_COLUMNS} FROM grants
             WHERE tool = $1 AND arguments_digest = $2 AND run_id = $3 AND consumed_at IS NULL AND expires_at > $4
             ORDER BY position`,
            [query.tool, query.arguments_digest, query.run_id, query.now],
          );
    return rows.map(rowToGrant);
  }

  async getIdempotencyKey(tool: string, key: string): Promise<string | undefined> {
    const { rows } = await this.query('SELECT call_id FROM idempotency_keys WHERE tool = $1 AND key = $2', [
      tool,
      key,
    ]);
    return rows[0]?.call_id as string | undefined;
  }
  async putIdempotencyKey(tool: string, key: string, callId: string): Promise<void> {
    await this.query(
      `INSERT INTO idempotency_keys (tool, key, call_id) VALUES ($1, $2, $3)
       ON CONFLICT (tool, key) DO UPDATE SET call_id = excluded.call_id`,
      [tool, key, callId],
    );
  }

  async putApiKey(key: ApiKeyRow): Promise<void> {
    await this.query(
      `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (${parameters(API_KEY_COLUMNS)})`,
      apiKeyValues(key),
      `an API key named ${key.name} (or with this hash) exists`,
    );
  }
  async getApiKey(keyHash: string): Promise<ApiKeyRow | undefined> {
    const { rows } = await this.query(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`, [
      keyHash,
    ]);
    return rows[0] && rowToApiKey(rows[0]);
  }
  async listApiKeys(): Promise<ApiKeyRow[]> {
    const { rows } = await this.query(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, position`,
    );
    return rows.map(rowToApiKey);
  }
  async revokeApiKey(name: string, revokedAt: number): Promise<boolean> {
    const result = await this.query(
      'UPDATE api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL',
      [revokedAt, name],
    );
    return (result.rowCount ?? 0) > 0;
  }
}
