// Conversions between the Store's objects and PostgreSQL rows. An absent optional field is NULL
// in a row and absent (not `undefined`) in the object read back. JSON values are stored as
// RFC 8785 canonical text.
import type { ApiKeyRow, CallRow, CheckpointRow, RunRow } from '@callgate/core';
import { canonicalJson } from '@callgate/core/crypto';
import type { Approval, Opening, StoredGrant } from '@callgate/protocol';

export const RUN_COLUMNS =
  'run_id, principal, framework, labels, parent_run_id, status, started_at, ended_at';
export const CALL_COLUMNS =
  'run_id, call_id, attempt, minted, tool, arguments_digest, decision, rules, approval_id, idempotency_key, outcome, decided_at, ended_at';
export const APPROVAL_COLUMNS =
  'id, run_id, call_id, tool, arguments, arguments_digest, rules, reason, status, created_at, expires_at, resolved_at, reviewer, response_reason, edited, injected';
export const GRANT_COLUMNS =
  'token_hash, v, run_id, call_id, tool, arguments_digest, expires_at, consumed_at';
export const API_KEY_COLUMNS = 'key_hash, name, role, created_at, revoked_at';

/** `$1, $2, …` for a column list (starting after `offset` parameters). */
export const parameters = (columns: string, offset = 0): string =>
  columns
    .split(', ')
    .map((_, index) => `$${index + offset + 1}`)
    .join(', ');

type Row = Record<string, unknown>;
const text = (value: unknown): string => value as string;
const num = (value: unknown): number => value as number;

export function runValues(run: RunRow): unknown[] {
  return [
    run.run_id,
    run.principal,
    run.framework,
    canonicalJson(run.labels),
    run.parent_run_id ?? null,
    run.status,
    run.started_at,
    run.ended_at ?? null,
  ];
}

export function rowToRun(row: Row): RunRow {
  const run: RunRow = {
    run_id: text(row.run_id),
    principal: text(row.principal),
    framework: text(row.framework),
    labels: JSON.parse(text(row.labels)) as Record<string, string>,
    status: row.status as RunRow['status'],
    started_at: num(row.started_at),
  };
  if (row.parent_run_id !== null) run.parent_run_id = text(row.parent_run_id);
  if (row.ended_at !== null) run.ended_at = num(row.ended_at);
  return run;
}

export function callValues(call: CallRow): unknown[] {
  return [
    call.run_id,
    call.call_id,
    call.attempt,
    call.minted,
    call.tool,
    call.arguments_digest,
    call.decision,
    canonicalJson(call.rules),
    call.approval_id ?? null,
    call.idempotency_key ?? null,
    call.outcome ?? null,
    call.decided_at,
    call.ended_at ?? null,
  ];
}

export function rowToCall(row: Row): CallRow {
  const call: CallRow = {
    run_id: text(row.run_id),
    call_id: text(row.call_id),
    attempt: num(row.attempt),
    minted: row.minted === true,
    tool: text(row.tool),
    arguments_digest: row.arguments_digest as string | null,
    decision: row.decision as CallRow['decision'],
    rules: JSON.parse(text(row.rules)) as string[],
    decided_at: num(row.decided_at),
  };
  if (row.approval_id !== null) call.approval_id = text(row.approval_id);
  if (row.idempotency_key !== null) call.idempotency_key = text(row.idempotency_key);
  if (row.outcome !== null) call.outcome = row.outcome as NonNullable<CallRow['outcome']>;
  if (row.ended_at !== null) call.ended_at = num(row.ended_at);
  return call;
}

export function approvalValues(approval: Approval): unknown[] {
  return [
    approval.id,
    approval.run_id,
    approval.call_id,
    approval.tool,
    approval.arguments === undefined ? null : canonicalJson(approval.arguments),
    approval.arguments_digest,
    canonicalJson(approval.rules),
    approval.reason,
    approval.status,
    approval.created_at,
    approval.expires_at,
    approval.resolved_at ?? null,
    approval.reviewer ?? null,
    approval.response_reason ?? null,
    approval.edited ?? null,
    approval.injected === undefined ? null : canonicalJson(approval.injected),
  ];
}

export function rowToApproval(row: Row): Approval {
  const approval: Approval = {
    id: text(row.id),
    run_id: text(row.run_id),
    call_id: text(row.call_id),
    tool: text(row.tool),
    arguments_digest: text(row.arguments_digest),
    rules: JSON.parse(text(row.rules)) as string[],
    reason: text(row.reason),
    status: row.status as Approval['status'],
    created_at: num(row.created_at),
    expires_at: num(row.expires_at),
  };
  if (row.arguments !== null) approval.arguments = JSON.parse(text(row.arguments)) as unknown;
  if (row.resolved_at !== null) approval.resolved_at = num(row.resolved_at);
  if (row.reviewer !== null) approval.reviewer = text(row.reviewer);
  if (row.response_reason !== null) approval.response_reason = text(row.response_reason);
  if (row.edited !== null) approval.edited = row.edited === true;
  if (row.injected !== null && row.injected !== undefined)
    approval.injected = JSON.parse(text(row.injected)) as Record<string, unknown>;
  return approval;
}

export function grantValues(grant: StoredGrant): unknown[] {
  return [
    grant.token_hash,
    grant.v,
    grant.run_id,
    grant.call_id,
    grant.tool,
    grant.arguments_digest,
    grant.expires_at,
    grant.consumed_at ?? null,
  ];
}

export function rowToGrant(row: Row): StoredGrant {
  const grant: StoredGrant = {
    v: row.v as StoredGrant['v'],
    token_hash: text(row.token_hash),
    run_id: text(row.run_id),
    call_id: text(row.call_id),
    tool: text(row.tool),
    arguments_digest: text(row.arguments_digest),
    expires_at: num(row.expires_at),
  };
  if (row.consumed_at !== null) grant.consumed_at = num(row.consumed_at);
  return grant;
}

export function rowToCheckpoint(row: Row): CheckpointRow {
  return {
    size: num(row.size),
    root: new Uint8Array(row.root as Buffer),
    note: text(row.note),
    ts: num(row.ts),
  };
}

export function rowToOpening(row: Row): Opening {
  return {
    commitment: text(row.commitment),
    salt: text(row.salt),
    value: JSON.parse(text(row.value)) as unknown,
  };
}

export function apiKeyValues(key: ApiKeyRow): unknown[] {
  return [key.key_hash, key.name, key.role, key.created_at, key.revoked_at ?? null];
}

export function rowToApiKey(row: Row): ApiKeyRow {
  const key: ApiKeyRow = {
    key_hash: text(row.key_hash),
    name: text(row.name),
    role: row.role as ApiKeyRow['role'],
    created_at: num(row.created_at),
  };
  if (row.revoked_at !== null) key.revoked_at = num(row.revoked_at);
  return key;
}

/** Bytes as a Buffer without copying (pg binds Buffers as BYTEA). */
export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
