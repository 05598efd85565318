// Conversions between the Store's objects and SQLite rows. SQLite has no `undefined`: an absent
// optional field is NULL in a row and absent (not `undefined`) in the object read back. JSON
// values are stored as RFC 8785 canonical text.
import type { ApiKeyRow, CallRow, CheckpointRow, RunRow } from '@callgate/core';
import { canonicalJson } from '@callgate/core/crypto';
import type { Approval, Opening, StoredGrant } from '@callgate/protocol';

/** A `runs` row. */
export interface RunRecordRow {
  run_id: string;
  principal: string;
  framework: string;
  labels: string;
  parent_run_id: string | null;
  status: string;
  started_at: number;
  ended_at: number | null;
}

export function runToRow(run: RunRow): RunRecordRow {
  return {
    run_id: run.run_id,
    principal: run.principal,
    framework: run.framework,
    labels: canonicalJson(run.labels),
    parent_run_id: run.parent_run_id ?? null,
    status: run.status,
    started_at: run.started_at,
    ended_at: run.ended_at ?? null,
  };
}

export function rowToRun(row: RunRecordRow): RunRow {
  const run: RunRow = {
    run_id: row.run_id,
    principal: row.principal,
    framework: row.framework,
    labels: JSON.parse(row.labels) as Record<string, string>,
    status: row.status as RunRow['status'],
    started_at: row.started_at,
  };
  if (row.parent_run_id !== null) run.parent_run_id = row.parent_run_id;
  if (row.ended_at !== null) run.ended_at = row.ended_at;
  return run;
}

/** A `calls` row (without its rowid). */
export interface CallRecordRow {
  run_id: string;
  call_id: string;
  attempt: number;
  minted: number;
  tool: string;
  arguments_digest: string | null;
  decision: string;
  rules: string;
  approval_id: string | null;
  idempotency_key: string | null;
  outcome: string | null;
  decided_at: number;
  ended_at: number | null;
}

/** The values of a `calls` row in CALL_COLUMNS order (positional binding: cheaper than by name). */
export type CallParameters = [
  run_id: string,
  call_id: string,
  attempt: number,
  minted: number,
  tool: string,
  arguments_digest: string | null,
  decision: string,
  rules: string,
  approval_id: string | null,
  idempotency_key: string | null,
  outcome: string | null,
  decided_at: number,
  ended_at: number | null,
];

/** A call as the parameters of the `calls` upsert. Written on every decision: kept lean. */
export function callToParameters(call: CallRow): CallParameters {
  return [
    call.run_id,
    call.call_id,
    call.attempt,
    call.minted ? 1 : 0,
    call.tool,
    call.arguments_digest,
    call.decision,
    canonicalStrings(call.rules),
    call.approval_id ?? null,
    call.idempotency_key ?? null,
    call.outcome ?? null,
    call.decided_at,
    call.ended_at ?? null,
  ];
}

const ANY_SURROGATE = /[\uD800-\uDFFF]/;

/**
 * RFC 8785 text of a list of strings. Without surrogates, JSON.stringify writes exactly that
 * (JCS escapes strings as JSON.stringify does); anything else goes through canonicalJson, which
 * refuses lone surrogates.
 */
function canonicalStrings(list: readonly string[]): string {
  for (const item of list) {
    if (typeof item !== 'string' || ANY_SURROGATE.test(item)) return canonicalJson(list);
  }
  return JSON.stringify(list);
}

export function rowToCall(row: CallRecordRow): CallRow {
  const call: CallRow = {
    run_id: row.run_id,
    call_id: row.call_id,
    attempt: row.attempt,
    minted: row.minted === 1,
    tool: row.tool,
    arguments_digest: row.arguments_digest,
    decision: row.decision as CallRow['decision'],
    rules: JSON.parse(row.rules) as string[],
    decided_at: row.decided_at,
  };
  if (row.approval_id !== null) call.approval_id = row.approval_id;
  if (row.idempotency_key !== null) call.idempotency_key = row.idempotency_key;
  if (row.outcome !== null) call.outcome = row.outcome as NonNullable<CallRow['outcome']>;
  if (row.ended_at !== null) call.ended_at = row.ended_at;
  return call;
}

/** An `approvals` row. */
export interface ApprovalRecordRow {
  id: string;
  run_id: string;
  call_id: string;
  tool: string;
  arguments: string | null;
  arguments_digest: string;
  rules: string;
  reason: string;
  status: string;
  created_at: number;
  expires_at: number;
  resolved_at: number | null;
  reviewer: string | null;
  response_reason: string | null;
  edited: number | null;
  injected: string | null;
}

export function approvalToRow(approval: Approval): ApprovalRecordRow {
  return {
    id: approval.id,
    run_id: approval.run_id,
    call_id: approval.call_id,
    tool: approval.tool,
    arguments: approval.arguments === undefined ? null : canonicalJson(approval.arguments),
    arguments_digest: approval.arguments_digest,
    rules: canonicalJson(approval.rules),
    reason: approval.reason,
    status: approval.status,
    created_at: approval.created_at,
    expires_at: approval.expires_at,
    resolved_at: approval.resolved_at ?? null,
    reviewer: approval.reviewer ?? null,
    response_reason: approval.response_reason ?? null,
    edited: approval.edited === undefined ? null : approval.edited ? 1 : 0,
    injected: approval.injected === undefined ? null : canonicalJson(approval.injected),
  };
}

export function rowToApproval(row: ApprovalRecordRow): Approval {
  const approval: Approval = {
    id: row.id,
    run_id: row.run_id,
    call_id: row.call_id,
    tool: row.tool,
    arguments_digest: row.arguments_digest,
    rules: JSON.parse(row.rules) as string[],
    reason: row.reason,
    status: row.status as Approval['status'],
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
  if (row.arguments !== null) approval.arguments = JSON.parse(row.arguments) as unknown;
  if (row.resolved_at !== null) approval.resolved_at = row.resolved_at;
  if (row.reviewer !== null) approval.reviewer = row.reviewer;
  if (row.response_reason !== null) approval.response_reason = row.response_reason;
  if (row.edited !== null) approval.edited = row.edited === 1;
  if (row.injected !== null && row.injected !== undefined)
    approval.injected = JSON.parse(row.injected) as Record<string, unknown>;
  return approval;
}

/** A `grants` row (without its rowid). */
export interface GrantRecordRow {
  token_hash: string;
  v: number;
  run_id: string;
  call_id: string;
  tool: string;
  arguments_digest: string;
  expires_at: number;
  consumed_at: number | null;
}

export function grantToRow(grant: StoredGrant): GrantRecordRow {
  return {
    token_hash: grant.token_hash,
    v: grant.v,
    run_id: grant.run_id,
    call_id: grant.call_id,
    tool: grant.tool,
    arguments_digest: grant.arguments_digest,
    expires_at: grant.expires_at,
    consumed_at: grant.consumed_at ?? null,
  };
}

export function rowToGrant(row: GrantRecordRow): StoredGrant {
  const grant: StoredGrant = {
    v: row.v as StoredGrant['v'],
    token_hash: row.token_hash,
    run_id: row.run_id,
    call_id: row.call_id,
    tool: row.tool,
    arguments_digest: row.arguments_digest,
    expires_at: row.expires_at,
  };
  if (row.consumed_at !== null) grant.consumed_at = row.consumed_at;
  return grant;
}

/** A `checkpoints` row. */
export interface CheckpointRecordRow {
  size: number;
  root: Buffer;
  note: string;
  ts: number;
}

export function rowToCheckpoint(row: CheckpointRecordRow): CheckpointRow {
  return { size: row.size, root: row.root, note: row.note, ts: row.ts };
}

/** An `openings` row. */
export interface OpeningRecordRow {
  commitment: string;
  salt: string;
  value: string;
}

export function openingToRow(opening: Opening): OpeningRecordRow {
  return { commitment: opening.commitment, salt: opening.salt, value: canonicalJson(opening.value) };
}

export function rowToOpening(row: OpeningRecordRow): Opening {
  return { commitment: row.commitment, salt: row.salt, value: JSON.parse(row.value) as unknown };
}

/** An `api_keys` row (without its rowid). */
export interface ApiKeyRecordRow {
  key_hash: string;
  name: string;
  role: string;
  created_at: number;
  revoked_at: number | null;
}

export function apiKeyToRow(key: ApiKeyRow): ApiKeyRecordRow {
  return {
    key_hash: key.key_hash,
    name: key.name,
    role: key.role,
    created_at: key.created_at,
    revoked_at: key.revoked_at ?? null,
  };
}

export function rowToApiKey(row: ApiKeyRecordRow): ApiKeyRow {
  const key: ApiKeyRow = {
    key_hash: row.key_hash,
    name: row.name,
    role: row.role as ApiKeyRow['role'],
    created_at: row.created_at,
  };
  if (row.revoked_at !== null) key.revoked_at = row.revoked_at;
  return key;
}

/** The bytes as a Buffer without copying: better-sqlite3 binds Buffers (not plain Uint8Arrays) as BLOBs. */
export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
