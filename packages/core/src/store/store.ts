import type {
  Approval,
  ApprovalStatus,
  LedgerRecord,
  Opening,
  Outcome,
  StoredGrant,
} from '@callgate/protocol';
import type { LogSequencer } from './sequencer.js';

/** A run as stored. Times are epoch milliseconds. */
export interface RunRow {
  run_id: string;
  principal: string;
  framework: string;
  labels: Record<string, string>;
  parent_run_id?: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled' | 'abandoned';
  started_at: number;
  ended_at?: number;
}

/**
 * One attempt of one call, as the gate tracks it. `outcome` is absent until the call ends.
 * `decision` is the effect decided (`refused` when the gate refused before deciding, e.g. invalid
 * arguments); `approval_id` links an `ask`.
 */
export interface CallRow {
  run_id: string;
  call_id: string;
  attempt: number;
  minted: boolean;
  tool: string;
  arguments_digest: string | null;
  decision: 'allow' | 'deny' | 'ask' | 'refused';
  rules: string[];
  approval_id?: string;
  idempotency_key?: string;
  outcome?: Outcome;
  decided_at: number;
  ended_at?: number;
}

/** One ledger record ready to store: the record, its RFC 8785 bytes and its RFC 9162 leaf hash. */
export interface StoredRecord {
  record: LedgerRecord;
  /** RFC 8785 canonical JSON of `record`. */
  canonical: string;
  /** SHA-256(0x00 ‖ canonical), 32 bytes. */
  leaf_hash: Uint8Array;
  /** sha256:<hex> of `canonical`: the next record of the run names it as `prev`. */
  digest: string;
}

/** The last record of a run: what the next record of that run chains to. */
export interface RunHead {
  run_seq: number;
  digest: string;
}

/** A stored checkpoint: a C2SP signed note over the log's first `size` records. */
export interface CheckpointRow {
  size: number;
  /** Merkle root (RFC 9162), 32 bytes. */
  root: Uint8Array;
  /** The signed note's full text. */
  note: string;
  ts: number;
}

/** How a pending approval ends: never back to `pending`. */
export type ApprovalResolution = {
  status: Exclude<Approval['status'], 'pending'>;
  resolved_at: number;
} & Partial<Pick<Approval, 'reviewer' | 'response_reason' | 'edited'>>;

/** Filters for listing approvals. */
export interface ApprovalQuery {
  status?: ApprovalStatus;
  run_id?: string;
  limit?: number;
}

/** An API key as stored: never the key itself, only its SHA-256 (hex). */
export interface ApiKeyRow {
  key_hash: string;
  name: string;
  role: 'agent' | 'reviewer' | 'admin';
  created_at: number;
  revoked_at?: number;
}

/** Durability of the store's commits, stated in every export. */
export type Synchronous = 'NORMAL' | 'FULL' | 'MEMORY';

/**
 * Everything the engine keeps. An implementation must make `resolveApproval` and `consumeGrant`
 * atomic compare-and-set operations (of many concurrent callers exactly one succeeds), and must
 * make `appendRecords` durable (per its `synchronous` mode) before its promise resolves: a
 * resolved append is an acknowledged record and must never be lost to a process crash.
 *
 * Records are appended in `seq` order with no gaps; the ledger assigns `seq`, the store keeps it.
 */
export interface Store {
  readonly synchronous: Synchronous;
  /**
   * Present when several engines may share this store's log (e.g. PostgreSQL): the ledger then
   * takes positions, run chains, the frontier and the checkpoint lease from it (see
   * {@link LogSequencer}) instead of assigning them in process. Absent for one-writer stores.
   */
  readonly sequencer?: LogSequencer;

  createRun(run: RunRow): Promise<void>;
  getRun(runId: string): Promise<RunRow | undefined>;
  /** Newest first. `before` is a `started_at` bound (exclusive). */
  listRuns(options?: { limit?: number; before?: number }): Promise<RunRow[]>;
  endRun(runId: string, status: RunRow['status'], endedAt: number): Promise<void>;

  /** Inserts or replaces the row of (run_id, call_id, attempt). */
  putCall(call: CallRow): Promise<void>;
  /** All attempts of all calls of a run, in decision order. */
  listCalls(runId: string): Promise<CallRow[]>;
  /** The latest attempt of one call, if any. */
  getCall(runId: string, callId: string): Promise<CallRow | undefined>;

  createApproval(approval: Approval): Promise<void>;
  getApproval(approvalId: string): Promise<Approval | undefined>;
  /** Oldest first. */
  listApprovals(query?: ApprovalQuery): Promise<Approval[]>;
  /**
   * Moves a pending approval to its final state. Returns the updated approval, or `undefined`
   * when it was not pending (already resolved by someone else) or does not exist.
   */
  resolveApproval(approvalId: string, update: ApprovalResolution): Promise<Approval | undefined>;

  /** @throws CallgateError `conflict` when a grant with the same token hash exists. */
  putGrant(grant: StoredGrant): Promise<void>;
  /**
   * Consumes the grant whose token hash is `tokenHash`, if it exists, is unconsumed and
   * `expires_at > now`. Returns the grant as it was before consumption, or `undefined`.
   */
  consumeGrant(tokenHash: string, now: number): Promise<StoredGrant | undefined>;
  /**
   * Optional: stores `grant` already spent at `consumedAt` (epoch ms), in one write, leaving
   * exactly what `putGrant` then `consumeGrant(token_hash, consumedAt)` leave (for a grant with
   * `expires_at > consumedAt`). Only for a store where that one write is as durable as
   * `consumeGrant`'s; without it, a grant issued already spent costs both writes.
   * @throws CallgateError `conflict` when a grant with the same token hash exists.
   */
  putSpentGrant?(grant: StoredGrant, consumedAt: number): Promise<void>;
  /**
   * Whether a grant bound to exactly this run, call, tool and arguments digest has been consumed
   * (by any process sharing the store): what an outcome claiming `grant_consumed` is held to.
   */
  grantConsumed(binding: {
    run_id: string;
    call_id: string;
    tool: string;
    arguments_digest: string;
  }): Promise<boolean>;
  /** Unconsumed, unexpired grants for `tool` and `arguments_digest`, in the order they were put. */
  findGrants(query: {
    tool: string;
    arguments_digest: string;
    run_id?: string;
    now: number;
  }): Promise<StoredGrant[]>;

  /** The call id that completed a side effect under this idempotency key, if any. */
  getIdempotencyKey(tool: string, key: string): Promise<string | undefined>;
  putIdempotencyKey(tool: string, key: string, callId: string): Promise<void>;

  /** Appends records (consecutive `seq`, starting at the current size). Durable when resolved. */
  appendRecords(records: StoredRecord[]): Promise<void>;
  /** How many records the log holds. */
  ledgerSize(): Promise<number>;
  /** Records with `from <= seq < to`, in order. */
  readRecords(from: number, to: number): Promise<LedgerRecord[]>;
  /** All records of one run, in `run_seq` order. */
  readRunRecords(runId: string): Promise<LedgerRecord[]>;
  /** Leaf hashes of records with `from <= seq < to`, in order. */
  readLeafHashes(from: number, to: number): Promise<Uint8Array[]>;
  /** The last record of a run, if it has any. */
  runHead(runId: string): Promise<RunHead | undefined>;

  putCheckpoint(checkpoint: CheckpointRow): Promise<void>;
  /**
   * Replaces the note of the stored checkpoint of `size` with `note` — the same checkpoint with
   * more signature lines (witness cosignatures). Optional: a store without it keeps notes as signed.
   * The caller checks that `note` is that checkpoint; false when no checkpoint of `size` is stored.
   */
  updateCheckpointNote?(size: number, note: string): Promise<boolean>;
  latestCheckpoint(): Promise<CheckpointRow | undefined>;
  /** Checkpoints with `size` in [fromSize, toSize], smallest first. */
  listCheckpoints(fromSize: number, toSize: number): Promise<CheckpointRow[]>;

  /** Vault: keeps openings of commitments (content beside the records). */
  putOpenings(openings: Opening[]): Promise<void>;
  getOpenings(commitments: string[]): Promise<Opening[]>;

  /** API keys of a server. `putApiKey` refuses a second key with the same name. */
  putApiKey(key: ApiKeyRow): Promise<void>;
  getApiKey(keyHash: string): Promise<ApiKeyRow | undefined>;
  listApiKeys(): Promise<ApiKeyRow[]>;
  /** Marks a key revoked; true when a live key of that name existed. */
  revokeApiKey(name: string, revokedAt: number): Promise<boolean>;

  /** Small key/value settings (e.g. the log's origin). */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;

  /**
   * Whether the store can write (optional: a store without it is taken as `ok`). `unavailable`
   * after a write failed on a full disk or an I/O error, until one succeeds again.
   */
  status?(): Promise<StoreStatus>;

  /** Finishes pending writes and releases resources. */
  close(): Promise<void>;
}

/** What {@link Store.status} reports; `since` is epoch ms of the first failed write. */
export type StoreStatus = { status: 'ok' } | { status: 'unavailable'; reason: string; since: number };
