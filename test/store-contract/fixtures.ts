// Valid objects for the store contract: runs, calls, approvals, grants and sealed, chained
// ledger records (RFC 8785 canonical bytes, RFC 9162 leaf hashes, per-run `prev` digests).
import type { CallRow, RunRow, StoredRecord } from '@callgate/core';
import { canonicalJson, randomBytes, sha256 } from '@callgate/core/crypto';
import type { Approval, LedgerRecord, RecordBody, StoredGrant } from '@callgate/protocol';

/** `sha256:<hex>` of `text` (UTF-8). */
export function digestOf(text: string): string {
  return `sha256:${sha256(text).toString('hex')}`;
}

/** A fresh random id with a readable prefix. */
export function newId(prefix: string): string {
  return `${prefix}-${randomBytes(8).toString('hex')}`;
}

/** Hex of bytes, for comparing Buffers and Uint8Arrays by value. */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function makeRun(overrides: Partial<RunRow> = {}): RunRow {
  return {
    run_id: newId('run'),
    principal: 'agent-key-1',
    framework: 'haystack',
    labels: { team: 'billing', 'ü-label': 'naïve ☃' },
    status: 'running',
    started_at: 1_700_000_000_000,
    ...overrides,
  };
}

export function makeCall(overrides: Partial<CallRow> = {}): CallRow {
  return {
    run_id: 'run-1',
    call_id: 'call-1',
    attempt: 1,
    minted: false,
    tool: 'send_invoice',
    arguments_digest: digestOf('{"amount":1200}'),
    decision: 'allow',
    rules: ['reads'],
    decided_at: 1_700_000_000_100,
    ...overrides,
  };
}

export function makeApproval(overrides: Partial<Approval> = {}): Approval {
  return {
    id: newId('approval'),
    run_id: 'run-1',
    call_id: 'call-1',
    tool: 'send_invoice',
    arguments: { amount: 1200, customer: { id: 'c-7', tags: ['vip', null] } },
    arguments_digest: digestOf('{"amount":1200}'),
    rules: ['large-invoices'],
    reason: 'invoices over 1000 need a person',
    status: 'pending',
    created_at: 1_700_000_000_000,
    expires_at: 1_700_000_300_000,
    ...overrides,
  };
}

export function makeGrant(overrides: Partial<StoredGrant> = {}): StoredGrant {
  return {
    v: 1,
    token_hash: digestOf(randomBytes(32).toString('base64url')),
    run_id: 'run-1',
    call_id: 'call-1',
    tool: 'send_invoice',
    arguments_digest: digestOf('{"amount":1200}'),
    expires_at: 1_700_000_060_000,
    ...overrides,
  };
}

/**
 * Seals a record for a store: its RFC 8785 canonical JSON, leaf hash SHA-256(0x00 ‖ canonical)
 * (RFC 9162) and `sha256:` digest.
 */
export function sealRecord(record: LedgerRecord): StoredRecord {
  const canonical = canonicalJson(record);
  return {
    record,
    canonical,
    leaf_hash: sha256(Uint8Array.of(0), canonical),
    digest: digestOf(canonical),
  };
}

/** A body of each common record type, chosen by `index` (varied content for the tests). */
export function sampleBody(index: number): RecordBody {
  const argumentsDigest = digestOf(`{"n":${index}}`);
  switch (index % 4) {
    case 0:
      return {
        type: 'model-message',
        role: 'assistant',
        content_commitment: digestOf(`content ${index}`),
        tool_calls: [
          {
            call_id: `call-${index}`,
            minted: false,
            tool: 'send_invoice',
            arguments_commitment: argumentsDigest,
          },
        ],
      };
    case 1:
      return {
        type: 'call-decision',
        call_id: `call-${index}`,
        minted: false,
        attempt: 1,
        tool: 'send_invoice',
        arguments_digest: argumentsDigest,
        arguments_commitment: digestOf(`commitment ${index}`),
        effect: 'allow',
        rules: ['reads'],
        reason: 'matched rule reads — “quoted” ✓',
        policy_digest: digestOf('policy'),
      };
    case 2:
      return {
        type: 'call-end',
        call_id: `call-${index}`,
        attempt: 1,
        tool: 'send_invoice',
        outcome: 'ok',
        arguments_digest: argumentsDigest,
        result_commitment: null,
        duration_ms: 1.25,
        grant_consumed: false,
      };
    default:
      return { type: 'gap', reason: 'engine unreachable', from_ts: index, to_ts: index + 10, calls: 2 };
  }
}

/**
 * Builds a log: consecutive `seq` from `startSeq`, and per run consecutive `run_seq` with `prev`
 * the digest of the run's previous record (`null` for its first, a `run-start`).
 */
export class RecordChain {
  #seq: number;
  readonly #heads = new Map<string, { run_seq: number; digest: string }>();

  constructor(startSeq = 0) {
    this.#seq = startSeq;
  }

  /** The next record of `runId` with `body` (a `run-start` when omitted on a new run). */
  next(runId: string, body?: RecordBody): StoredRecord {
    const head = this.#heads.get(runId);
    const chosen: RecordBody =
      body ??
      (head
        ? sampleBody(this.#seq)
        : { type: 'run-start', principal: 'agent-key-1', framework: 'ai-sdk', labels: { env: 'test' } });
    const record = {
      v: 1,
      seq: this.#seq,
      run_id: runId,
      run_seq: head ? head.run_seq + 1 : 0,
      ts: 1_700_000_000_000 + this.#seq,
      prev: head ? head.digest : null,
      ...chosen,
    } as LedgerRecord;
    const sealed = sealRecord(record);
    this.#seq += 1;
    this.#heads.set(runId, { run_seq: record.run_seq, digest: sealed.digest });
    return sealed;
  }

  /** `count` records spread round-robin over `runIds`. */
  many(runIds: string[], count: number): StoredRecord[] {
    return Array.from({ length: count }, (_, index) => this.next(runIds[index % runIds.length] ?? 'run-1'));
  }
}
