// The SQL of the SQLite store: every statement is prepared once per connection, here.

import type { RunHead } from '@callgate/core';
import type Database from 'better-sqlite3';
import type {
  ApiKeyRecordRow,
  ApprovalRecordRow,
  CallParameters,
  CallRecordRow,
  CheckpointRecordRow,
  GrantRecordRow,
  OpeningRecordRow,
  RunRecordRow,
} from './rows.js';

const RUN_COLUMNS = 'run_id, principal, framework, labels, parent_run_id, status, started_at, ended_at';
const CALL_COLUMNS =
  'run_id, call_id, attempt, minted, tool, arguments_digest, decision, rules, approval_id, idempotency_key, outcome, decided_at, ended_at';
const APPROVAL_COLUMNS =
  'id, run_id, call_id, tool, arguments, arguments_digest, rules, reason, status, created_at, expires_at, resolved_at, reviewer, response_reason, edited, injected';
const API_KEY_COLUMNS = 'key_hash, name, role, created_at, revoked_at';
const GRANT_COLUMNS = 'token_hash, v, run_id, call_id, tool, arguments_digest, expires_at, consumed_at';

/** The `@name` placeholders of a column list. */
const placeholders = (columns: string): string =>
  columns
    .split(', ')
    .map((column) => `@${column}`)
    .join(', ');

/**
 * The part of a better-sqlite3 statement the store uses, with its bind parameters `P` (a tuple;
 * `[row]` for `@name` parameters) and result row `R` (a column's value for plucked statements).
 */
export interface PreparedStatement<P extends unknown[], R> {
  run(...parameters: P): Database.RunResult;
  get(...parameters: P): R | undefined;
  all(...parameters: P): R[];
}

/** Prepares every fixed statement of the store on `database`. */
export function prepareStatements(database: Database.Database) {
  const prepare = <P extends unknown[], R = unknown>(source: string): PreparedStatement<P, R> =>
    database.prepare<P, R>(source);
  /** A statement returning its first column's value instead of a row object. */
  const pluck = <P extends unknown[], R>(source: string): PreparedStatement<P, R> =>
    database.prepare<P, R>(source).pluck();
  return {
    /** Changes when another connection commits (SQLite `PRAGMA data_version`). */
    dataVersion: pluck<[], number>('PRAGMA data_version'),
    insertRun: prepare<[RunRecordRow]>(
      `INSERT INTO runs (${RUN_COLUMNS}) VALUES (${placeholders(RUN_COLUMNS)})`,
    ),
    getRun: prepare<[string], RunRecordRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`),
    listRuns: prepare<[number], RunRecordRow>(
      `SELECT ${RUN_COLUMNS} FROM runs ORDER BY started_at DESC, run_id DESC LIMIT ?`,
    ),
    listRunsBefore: prepare<[number, number], RunRecordRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE started_at < ? ORDER BY started_at DESC, run_id DESC LIMIT ?`,
    ),
    endRun: prepare<[string, number, string]>('UPDATE runs SET status = ?, ended_at = ? WHERE run_id = ?'),

    upsertCall: prepare<CallParameters>(
      `INSERT INTO calls (${CALL_COLUMNS}) VALUES (${CALL_COLUMNS.split(', ')
        .map(() => '?')
        .join(', ')})
       ON CONFLICT (run_id, call_id, attempt) DO UPDATE SET ${CALL_COLUMNS.split(', ')
         .map((column) => `${column} = excluded.${column}`)
         .join(', ')}`,
    ),
    listCalls: prepare<[string], CallRecordRow>(
      `SELECT ${CALL_COLUMNS} FROM calls WHERE run_id = ? ORDER BY id`,
    ),
    getCall: prepare<[string, string], CallRecordRow>(
      `SELECT ${CALL_COLUMNS} FROM calls WHERE run_id = ? AND call_id = ? ORDER BY attempt DESC LIMIT 1`,
    ),

    insertApproval: prepare<[ApprovalRecordRow]>(
      `INSERT INTO approvals (${APPROVAL_COLUMNS}) VALUES (${placeholders(APPROVAL_COLUMNS)})`,
    ),
    getApproval: prepare<[string], ApprovalRecordRow>(
      `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = ?`,
    ),
    // One conditional UPDATE: of many concurrent callers (any connection, any process) exactly
    // one sees the row still pending and gets it back.
    resolveApproval: prepare<
      [
        {
          id: string;
          status: string;
          resolved_at: number | null;
          reviewer: string | null;
          response_reason: string | null;
          edited: number | null;
        },
      ],
      ApprovalRecordRow
    >(
      `UPDATE approvals SET status = @status, resolved_at = @resolved_at,
         reviewer = coalesce(@reviewer, reviewer),
         response_reason = coalesce(@response_reason, response_reason),
         edited = coalesce(@edited, edited)
       WHERE id = @id AND status = 'pending'
       RETURNING ${APPROVAL_COLUMNS}`,
    ),

    insertGrant: prepare<[GrantRecordRow]>(
      `INSERT INTO grants (${GRANT_COLUMNS}) VALUES (${placeholders(GRANT_COLUMNS)})`,
    ),
    // One conditional UPDATE, atomic like resolveApproval. RETURNING gives the row after the
    // update; consumeGrant drops `consumed_at` (it was NULL before) to return the grant as it was.
    consumeGrant: prepare<[number, string, number], GrantRecordRow>(
      `UPDATE grants SET consumed_at = ?
       WHERE token_hash = ? AND consumed_at IS NULL AND expires_at > ?
       RETURNING ${GRANT_COLUMNS}`,
    ),
    grantConsumed: pluck<[string, string, string, string], number>(
      `SELECT 1 FROM grants
       WHERE run_id = ? AND call_id = ? AND tool = ? AND arguments_digest = ? AND consumed_at IS NOT NULL
       LIMIT 1`,
    ),
    findGrants: prepare<[string, string, number], GrantRecordRow>(
      `SELECT ${GRANT_COLUMNS} FROM grants
       WHERE tool = ? AND arguments_digest = ? AND consumed_at IS NULL AND expires_at > ? ORDER BY id`,
    ),
    findRunGrants: prepare<[string, string, string, number], GrantRecordRow>(
      `SELECT ${GRANT_COLUMNS} FROM grants
       WHERE tool = ? AND arguments_digest = ? AND run_id = ? AND consumed_at IS NULL AND expires_at > ?
       ORDER BY id`,
    ),

    getIdempotencyKey: pluck<[string, string], string>(
      'SELECT call_id FROM idempotency_keys WHERE tool = ? AND key = ?',
    ),
    putIdempotencyKey: prepare<[string, string, string]>(
      `INSERT INTO idempotency_keys (tool, key, call_id) VALUES (?, ?, ?)
       ON CONFLICT (tool, key) DO UPDATE SET call_id = excluded.call_id`,
    ),

    insertRecord: prepare<[number, string, number, string, string, Buffer, string]>(
      'INSERT INTO records (seq, run_id, run_seq, type, canonical, leaf_hash, digest) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    ledgerSize: pluck<[], number>('SELECT coalesce(max(seq) + 1, 0) FROM records'),
    readRecords: pluck<[number, number], string>(
      'SELECT canonical FROM records WHERE seq >= ? AND seq < ? ORDER BY seq',
    ),
    readRunRecords: pluck<[string], string>(
      'SELECT canonical FROM records WHERE run_id = ? ORDER BY run_seq',
    ),
    readLeafHashes: pluck<[number, number], Buffer>(
      'SELECT leaf_hash FROM records WHERE seq >= ? AND seq < ? ORDER BY seq',
    ),
    runHead: prepare<[string], RunHead>(
      'SELECT run_seq, digest FROM records WHERE run_id = ? ORDER BY run_seq DESC LIMIT 1',
    ),

    insertCheckpoint: prepare<[number, Buffer, string, number]>(
      'INSERT INTO checkpoints (size, root, note, ts) VALUES (?, ?, ?, ?) ON CONFLICT (size) DO NOTHING',
    ),
    updateCheckpointNote: prepare<[string, number]>('UPDATE checkpoints SET note = ? WHERE size = ?'),
    getCheckpoint: prepare<[number], CheckpointRecordRow>(
      'SELECT size, root, note, ts FROM checkpoints WHERE size = ?',
    ),
    latestCheckpoint: prepare<[], CheckpointRecordRow>(
      'SELECT size, root, note, ts FROM checkpoints ORDER BY size DESC LIMIT 1',
    ),
    listCheckpoints: prepare<[number, number], CheckpointRecordRow>(
      'SELECT size, root, note, ts FROM checkpoints WHERE size >= ? AND size <= ? ORDER BY size',
    ),

    putOpening: prepare<[OpeningRecordRow]>(
      `INSERT INTO openings (commitment, salt, value) VALUES (@commitment, @salt, @value)
       ON CONFLICT (commitment) DO UPDATE SET salt = excluded.salt, value = excluded.value`,
    ),
    getOpening: prepare<[string], OpeningRecordRow>(
      'SELECT commitment, salt, value FROM openings WHERE commitment = ?',
    ),

    insertApiKey: prepare<[ApiKeyRecordRow]>(
      `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (${placeholders(API_KEY_COLUMNS)})`,
    ),
    getApiKey: prepare<[string], ApiKeyRecordRow>(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`,
    ),
    listApiKeys: prepare<[], ApiKeyRecordRow>(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`,
    ),
    revokeApiKey: prepare<[number, string]>(
      'UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL',
    ),

    getMeta: pluck<[string], string>('SELECT value FROM meta WHERE key = ?'),
    setMeta: prepare<[string, string]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;

/** The filters of listApprovals, each with its own statement (so each can use an index). */
export type ApprovalFilter = 'none' | 'status' | 'run' | 'status-and-run';

/** The listApprovals statement of `filter`: parameters are status, run_id (as filtered), limit. */
export function prepareApprovalQuery(
  database: Database.Database,
  filter: ApprovalFilter,
): PreparedStatement<unknown[], ApprovalRecordRow> {
  const where = {
    none: '',
    status: 'WHERE status = ?',
    run: 'WHERE run_id = ?',
    'status-and-run': 'WHERE status = ? AND run_id = ?',
  }[filter];
  return database.prepare<unknown[], ApprovalRecordRow>(
    `SELECT ${APPROVAL_COLUMNS} FROM approvals ${where} ORDER BY created_at, rowid LIMIT ?`,
  );
}
