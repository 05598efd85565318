import type { ApiKeyRow, ApprovalQuery, CallRow, RunRow, Store } from '@callgate/core';
import type { Approval, StoredGrant } from '@callgate/protocol';
import { conflictOnConstraint, openDatabase, type SqliteStoreOptions } from './database.js';
import {
  type ApprovalRecordRow,
  apiKeyToRow,
  approvalToRow,
  type CallParameters,
  callToParameters,
  grantToRow,
  rowToApiKey,
  rowToApproval,
  rowToCall,
  rowToGrant,
  rowToRun,
  runToRow,
} from './rows.js';
import { SqliteLog } from './sqlite-log.js';
import { type ApprovalFilter, type PreparedStatement, prepareApprovalQuery } from './statements.js';

export type { SqliteStoreOptions } from './database.js';

/** API keys remembered by `getApiKey` at most (all are forgotten when it is full). */
const REMEMBERED_API_KEYS = 1_000;

/**
 * The embedded default {@link Store}: one SQLite database file (better-sqlite3) in WAL mode.
 *
 * Group commit: every write (records, calls, runs, approvals, grants, settings) is queued, and
 * all writes made during one turn of the event loop commit together in one immediate
 * transaction at its end (see {@link WriteQueue}); each write's promise resolves only after that
 * commit, so a resolved write — an acknowledged record above all — is durable per
 * {@link SqliteStoreOptions.synchronous}. A commit costs ~15-30 µs on a small VM (a WAL frame
 * per changed page, and locks) however few rows it holds, so concurrent decisions share one. Reads run synchronously on the calling
 * thread after committing the queued writes, so they see every write made before them.
 * `resolveApproval` and `consumeGrant` are single conditional UPDATEs run inside the write
 * transaction, atomic across connections and processes sharing the file. WAL checkpoints run from
 * a timer on a worker thread with its own connection (see `WalCheckpointer`), never inside
 * a commit and never on the event loop (copying the WAL costs about 20-40 ms per second of
 * 1,000-3,000 single-record commits on a small VM);
 * `close()` commits what is queued, checkpoints fully and truncates the WAL. While another
 * connection holds the write lock, a commit waits (blocking the thread) up to `busyTimeoutMs`,
 * then its writes reject with `SQLITE_BUSY`.
 *
 * Errors: a duplicate run, approval, grant or live API key name, an out-of-order append or a second checkpoint of
 * one size with another root reject with CallgateError `conflict` (`ledger-invalid` for the
 * checkpoint); a write that meets a full disk or an I/O error rejects with `store-unavailable`
 * (see {@link SqliteStore.status}); other SQLite errors reject as thrown by better-sqlite3.
 */
export class SqliteStore extends SqliteLog implements Store {
  readonly #approvalQueries = new Map<ApprovalFilter, PreparedStatement<unknown[], ApprovalRecordRow>>();
  /** API keys as last read, by hash (undefined: no such key), valid while `data_version` is unchanged. */
  readonly #apiKeys = new Map<string, ApiKeyRow | undefined>();
  #apiKeysVersion: number | undefined;

  /**
   * Opens (creating when missing) the database at `path` and migrates it to the current schema
   * (see {@link openDatabase}), then starts the background checkpoint timer (unref'd: it never
   * keeps the process alive; the checkpoint worker starts at its first tick).
   *
   * @param path a file path; `:memory:` and temporary databases are refused (no WAL, nothing
   *   durable — use core's MemoryStore instead).
   * @throws CallgateError `internal` when the database cannot use WAL or is at a newer schema
   *   version than this code knows; RangeError for a non-positive interval; SqliteError when the
   *   file cannot be opened.
   */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStore {
    const { database, synchronous, walCheckpointIntervalMs, busyTimeoutMs, walSizeLimitBytes } = openDatabase(
      path,
      options,
    );
    return new SqliteStore(database, path, {
      ...options,
      synchronous,
      walCheckpointIntervalMs,
      busyTimeoutMs,
      walSizeLimitBytes,
    });
  }

  async createRun(run: RunRow): Promise<void> {
    const row = runToRow(run);
    return this.write(() => {
      conflictOnConstraint(`run ${run.run_id} exists`, () => this.statements.insertRun.run(row));
    });
  }
  async getRun(runId: string): Promise<RunRow | undefined> {
    this.settle();
    const row = this.statements.getRun.get(runId);
    return row && rowToRun(row);
  }
  async listRuns(options: { limit?: number; before?: number } = {}): Promise<RunRow[]> {
    this.settle();
    const { limit = 100, before } = options;
    const rows =
      before === undefined
        ? this.statements.listRuns.all(limit)
        : this.statements.listRunsBefore.all(before, limit);
    return rows.map(rowToRun);
  }
  async endRun(runId: string, status: RunRow['status'], endedAt: number): Promise<void> {
    return this.write(() => {
      this.statements.endRun.run(status, endedAt, runId);
    });
  }

  // Not `async` (one promise less per decision, the hot path): a bad input is a rejection all the same.
  putCall(call: CallRow): Promise<void> {
    let parameters: CallParameters;
    try {
      // Converted now: the caller may change its object once the promise is made.
      parameters = callToParameters(call);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.write(() => {
      this.statements.upsertCall.run(...parameters);
    });
  }
  async listCalls(runId: string): Promise<CallRow[]> {
    this.settle();
    return this.statements.listCalls.all(runId).map(rowToCall);
  }
  async getCall(runId: string, callId: string): Promise<CallRow | undefined> {
    this.settle();
    const row = this.statements.getCall.get(runId, callId);
    return row && rowToCall(row);
  }

  async createApproval(approval: Approval): Promise<void> {
    const row = approvalToRow(approval);
    return this.write(() => {
      conflictOnConstraint(`approval ${approval.id} exists`, () => this.statements.insertApproval.run(row));
    });
  }
  async getApproval(approvalId: string): Promise<Approval | undefined> {
    this.settle();
    const row = this.statements.getApproval.get(approvalId);
    return row && rowToApproval(row);
  }
  async listApprovals(query: ApprovalQuery = {}): Promise<Approval[]> {
    this.settle();
    const { status, run_id: runId, limit = 1000 } = query;
    const parameters: unknown[] = [];
    if (status !== undefined) parameters.push(status);
    if (runId !== undefined) parameters.push(runId);
    parameters.push(limit);
    const filter: ApprovalFilter =
      status === undefined
        ? runId === undefined
          ? 'none'
          : 'run'
        : runId === undefined
          ? 'status'
          : 'status-and-run';
    return this.#approvalQuery(filter)
      .all(...parameters)
      .map(rowToApproval);
  }
  #approvalQuery(filter: ApprovalFilter): PreparedStatement<unknown[], ApprovalRecordRow> {
    let statement = this.#approvalQueries.get(filter);
    if (!statement) {
      statement = prepareApprovalQuery(this.database, filter);
      this.#approvalQueries.set(filter, statement);
    }
    return statement;
  }
  /**
   * Atomically moves a pending approval to `update.status`; see {@link Store.resolveApproval}.
   * Fields of `update` left undefined keep their stored values. The conditional UPDATE runs inside
   * the write transaction; the promise resolves once it committed.
   *
   * @throws RangeError when `update.status` is `pending` (that would re-open the approval).
   */
  async resolveApproval(
    approvalId: string,
    update: Pick<Approval, 'status' | 'resolved_at'> &
      Partial<Pick<Approval, 'reviewer' | 'response_reason' | 'edited'>>,
  ): Promise<Approval | undefined> {
    if (update.status === 'pending') throw new RangeError('an approval cannot be resolved to pending');
    const parameters = {
      id: approvalId,
      status: update.status,
      resolved_at: update.resolved_at ?? null,
      reviewer: update.reviewer ?? null,
      response_reason: update.response_reason ?? null,
      edited: update.edited === undefined ? null : update.edited ? 1 : 0,
    };
    const row = await this.write(() => this.statements.resolveApproval.get(parameters));
    return row && rowToApproval(row);
  }

  /** Stores a new grant. @throws CallgateError `conflict` when a grant with its token hash exists. */
  async putGrant(grant: StoredGrant): Promise<void> {
    const row = grantToRow(grant);
    return this.write(() => {
      conflictOnConstraint('a grant with this token hash exists', () => this.statements.insertGrant.run(row));
    });
  }
  /**
   * Stores a grant already spent at `consumedAt`: one INSERT with `consumed_at` set, committed
   * like every write (the same commit as `consumeGrant`'s UPDATE would be).
   * @throws CallgateError `conflict` when a grant with its token hash exists.
   */
  async putSpentGrant(grant: StoredGrant, consumedAt: number): Promise<void> {
    return this.putGrant({ ...grant, consumed_at: consumedAt });
  }
  /** Consumes a grant with one conditional UPDATE inside the write transaction (see resolveApproval). */
  async consumeGrant(tokenHash: string, now: number): Promise<StoredGrant | undefined> {
    const row = await this.write(() => this.statements.consumeGrant.get(now, tokenHash, now));
    return row && rowToGrant({ ...row, consumed_at: null });
  }
  async grantConsumed(binding: {
    run_id: string;
    call_id: string;
    tool: string;
    arguments_digest: string;
  }): Promise<boolean> {
    this.settle();
    return (
      this.statements.grantConsumed.get(
        binding.run_id,
        binding.call_id,
        binding.tool,
        binding.arguments_digest,
      ) !== undefined
    );
  }
  async findGrants(query: {
    tool: string;
    arguments_digest: string;
    run_id?: string;
    now: number;
  }): Promise<StoredGrant[]> {
    this.settle();
    const rows =
      query.run_id === undefined
        ? this.statements.findGrants.all(query.tool, query.arguments_digest, query.now)
        : this.statements.findRunGrants.all(query.tool, query.arguments_digest, query.run_id, query.now);
    return rows.map(rowToGrant);
  }

  async getIdempotencyKey(tool: string, key: string): Promise<string | undefined> {
    this.settle();
    return this.statements.getIdempotencyKey.get(tool, key);
  }
  async putIdempotencyKey(tool: string, key: string, callId: string): Promise<void> {
    return this.write(() => {
      this.statements.putIdempotencyKey.run(tool, key, callId);
    });
  }

  /** Stores a new API key. @throws CallgateError `conflict` when a live key has its name or hash. */
  async putApiKey(key: ApiKeyRow): Promise<void> {
    this.#apiKeys.clear();
    const row = apiKeyToRow(key);
    return this.write(() => {
      conflictOnConstraint(`an API key named ${key.name} (or with this hash) exists`, () =>
        this.statements.insertApiKey.run(row),
      );
    });
  }
  /**
   * The key stored under `keyHash`. Answers from memory while no other connection has committed
   * since the key was read (`PRAGMA data_version`, one cheap read): every request of a server
   * looks its key up, and a read first commits the writes queued so far. A key revoked or
   * created by another process (`callgate keys revoke`) is seen at once; this connection's own
   * `putApiKey` and `revokeApiKey` forget what is remembered.
   */
  async getApiKey(keyHash: string): Promise<ApiKeyRow | undefined> {
    const version = this.statements.dataVersion.get();
    if (version !== this.#apiKeysVersion || this.#apiKeys.size >= REMEMBERED_API_KEYS) {
      this.#apiKeys.clear();
      this.#apiKeysVersion = version;
    }
    if (this.#apiKeys.has(keyHash)) {
      const known = this.#apiKeys.get(keyHash);
      return known && { ...known };
    }
    this.settle();
    const row = this.statements.getApiKey.get(keyHash);
    const key = row && rowToApiKey(row);
    this.#apiKeys.set(keyHash, key && { ...key });
    return key;
  }
  /** All keys, revoked ones included, oldest first. */
  async listApiKeys(): Promise<ApiKeyRow[]> {
    this.settle();
    return this.statements.listApiKeys.all().map(rowToApiKey);
  }
  async revokeApiKey(name: string, revokedAt: number): Promise<boolean> {
    this.#apiKeys.clear();
    return this.write(() => this.statements.revokeApiKey.run(revokedAt, name).changes > 0);
  }
}
