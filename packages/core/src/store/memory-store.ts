import {
  type Approval,
  CallgateError,
  type LedgerRecord,
  type Opening,
  type StoredGrant,
} from '@callgate/protocol';
import type {
  ApiKeyRow,
  ApprovalQuery,
  ApprovalResolution,
  CallRow,
  CheckpointRow,
  RunHead,
  RunRow,
  Store,
  StoredRecord,
  Synchronous,
} from './store.js';

const clone = <T>(value: T): T => structuredClone(value);

/**
 * A copy of a call row sharing nothing with it: what `structuredClone` gives for its shape (flat
 * fields and the `rules` list) at a fraction of the cost, as a call row is stored twice per call.
 */
export const copyCall = (call: CallRow): CallRow => ({ ...call, rules: [...call.rules] });

/** Bytes of an RFC 9162 leaf hash (SHA-256). */
const LEAF_BYTES = 32;

/** The key of the grants for one tool and arguments digest (what `findGrants` looks up). */
const grantKey = (tool: string, digest: string): string => `${tool}\u0000${digest}`;

/** The key of the binding a consumed grant answers `grantConsumed` for. */
const bindingKey = (binding: { run_id: string; call_id: string; tool: string; arguments_digest: string }) =>
  `${binding.run_id}\u0000${binding.call_id}\u0000${binding.tool}\u0000${binding.arguments_digest}`;

/**
 * A {@link Store} in process memory: for tests, benchmarks and short-lived embedded use.
 * Nothing survives the process; `synchronous` is `MEMORY`, and exports say so.
 */
export class MemoryStore implements Store {
  readonly synchronous: Synchronous = 'MEMORY';
  readonly #runs = new Map<string, RunRow>();
  readonly #calls = new Map<string, Map<string, CallRow>>();
  readonly #approvals = new Map<string, Approval>();
  readonly #grants = new Map<string, StoredGrant>();
  /** Unconsumed grants by tool and arguments digest (see `grantKey`), in the order they were put. */
  readonly #openGrants = new Map<string, StoredGrant[]>();
  /** Bindings (see `bindingKey`) of the grants consumed. */
  readonly #consumedBindings = new Set<string>();
  readonly #idempotency = new Map<string, string>();
  /**
   * What the store keeps of a record is what its reads need: the record (not its canonical text,
   * most of a record's memory, which no read needs), its leaf hash packed into {@link #leaves}
   * (32 bytes a record, not a Buffer and ArrayBuffer of its own: ~200 bytes and one more object
   * for the collector to track per record), and the digest of each run's last record (no wrapper
   * object per record).
   */
  readonly #records: LedgerRecord[] = [];
  readonly #runRecords = new Map<string, LedgerRecord[]>();
  /** The digest of each run's last record (its head, with that record's `run_seq`). */
  readonly #headDigests = new Map<string, string>();
  /** The leaf hashes of `#records`, 32 bytes each in seq order; grown by doubling. */
  #leaves = Buffer.alloc(LEAF_BYTES * 64);
  readonly #checkpoints: CheckpointRow[] = [];
  readonly #openings = new Map<string, Opening>();
  readonly #meta = new Map<string, string>();
  readonly #keys = new Map<string, ApiKeyRow>();

  async createRun(run: RunRow): Promise<void> {
    if (this.#runs.has(run.run_id)) throw new Error(`run ${run.run_id} exists`);
    this.#runs.set(run.run_id, clone(run));
  }
  async getRun(runId: string): Promise<RunRow | undefined> {
    const run = this.#runs.get(runId);
    return run && clone(run);
  }
  async listRuns(options: { limit?: number; before?: number } = {}): Promise<RunRow[]> {
    const { limit = 100, before = Number.POSITIVE_INFINITY } = options;
    return [...this.#runs.values()]
      .filter((run) => run.started_at < before)
      .sort((a, b) => b.started_at - a.started_at || (a.run_id < b.run_id ? 1 : -1))
      .slice(0, limit)
      .map(clone);
  }
  async endRun(runId: string, status: RunRow['status'], endedAt: number): Promise<void> {
    const run = this.#runs.get(runId);
    if (run) Object.assign(run, { status, ended_at: endedAt });
  }

  async putCall(call: CallRow): Promise<void> {
    let calls = this.#calls.get(call.run_id);
    if (!calls) {
      calls = new Map();
      this.#calls.set(call.run_id, calls);
    }
    calls.set(`${call.call_id}\u0000${call.attempt}`, copyCall(call));
  }
  async listCalls(runId: string): Promise<CallRow[]> {
    return [...(this.#calls.get(runId)?.values() ?? [])].map(copyCall);
  }
  async getCall(runId: string, callId: string): Promise<CallRow | undefined> {
    let last: CallRow | undefined;
    for (const call of this.#calls.get(runId)?.values() ?? []) {
      if (call.call_id === callId && (!last || call.attempt > last.attempt)) last = call;
    }
    return last && copyCall(last);
  }

  async createApproval(approval: Approval): Promise<void> {
    if (this.#approvals.has(approval.id)) throw new Error(`approval ${approval.id} exists`);
    this.#approvals.set(approval.id, clone(approval));
  }
  async getApproval(approvalId: string): Promise<Approval | undefined> {
    const approval = this.#approvals.get(approvalId);
    return approval && clone(approval);
  }
  async listApprovals(query: ApprovalQuery = {}): Promise<Approval[]> {
    const { status, run_id, limit = 1000 } = query;
    return [...this.#approvals.values()]
      .filter(
        (a) => (status === undefined || a.status === status) && (run_id === undefined || a.run_id === run_id),
      )
      .sort((a, b) => a.created_at - b.created_at)
      .slice(0, limit)
      .map(clone);
  }
  async resolveApproval(approvalId: string, update: ApprovalResolution): Promise<Approval | undefined> {
    const approval = this.#approvals.get(approvalId);
    if (approval?.status !== 'pending') return undefined;
    Object.assign(approval, update);
    return clone(approval);
  }

  async putGrant(grant: StoredGrant): Promise<void> {
    if (this.#grants.has(grant.token_hash))
      throw new CallgateError('conflict', 'a grant with this token exists');
    const stored = clone(grant);
    this.#grants.set(grant.token_hash, stored);
    if (stored.consumed_at !== undefined) {
      this.#consumedBindings.add(bindingKey(stored));
      return;
    }
    const key = grantKey(stored.tool, stored.arguments_digest);
    const open = this.#openGrants.get(key);
    if (open) open.push(stored);
    else this.#openGrants.set(key, [stored]);
  }
  async putSpentGrant(grant: StoredGrant, consumedAt: number): Promise<void> {
    return this.putGrant({ ...grant, consumed_at: consumedAt });
  }
  async consumeGrant(tokenHash: string, now: number): Promise<StoredGrant | undefined> {
    const grant = this.#grants.get(tokenHash);
    if (!grant || grant.consumed_at !== undefined || grant.expires_at <= now) return undefined;
    const before = clone(grant);
    grant.consumed_at = now;
    this.#consumedBindings.add(bindingKey(grant));
    const key = grantKey(grant.tool, grant.arguments_digest);
    const open = this.#openGrants.get(key);
    if (open) {
      open.splice(open.indexOf(grant), 1);
      if (open.length === 0) this.#openGrants.delete(key);
    }
    return before;
  }
  async grantConsumed(binding: {
    run_id: string;
    call_id: string;
    tool: string;
    arguments_digest: string;
  }): Promise<boolean> {
    return this.#consumedBindings.has(bindingKey(binding));
  }
  async findGrants(query: {
    tool: string;
    arguments_digest: string;
    run_id?: string;
    now: number;
  }): Promise<StoredGrant[]> {
    // The grants for this tool and digest alone, not every grant the store holds.
    const open = this.#openGrants.get(grantKey(query.tool, query.arguments_digest));
    if (!open) return [];
    return open
      .filter((g) => (query.run_id === undefined || g.run_id === query.run_id) && g.expires_at > query.now)
      .map(clone);
  }

  async getIdempotencyKey(tool: string, key: string): Promise<string | undefined> {
    return this.#idempotency.get(`${tool}\u0000${key}`);
  }
  async putIdempotencyKey(tool: string, key: string, callId: string): Promise<void> {
    this.#idempotency.set(`${tool}\u0000${key}`, callId);
  }

  async appendRecords(records: StoredRecord[]): Promise<void> {
    // All or nothing: check the whole batch before appending any of it.
    records.forEach((stored, index) => {
      if (stored.record.seq !== this.#records.length + index) {
        throw new CallgateError(
          'ledger-invalid',
          `append out of order: seq ${stored.record.seq}, expected ${this.#records.length + index}`,
        );
      }
      if (stored.leaf_hash.length !== LEAF_BYTES)
        throw new CallgateError(
          'ledger-invalid',
          `the leaf hash of seq ${stored.record.seq} is ${stored.leaf_hash.length} bytes, not ${LEAF_BYTES}`,
        );
    });
    const needed = (this.#records.length + records.length) * LEAF_BYTES;
    if (needed > this.#leaves.length) {
      const grown = Buffer.alloc(Math.max(needed, this.#leaves.length * 2));
      this.#leaves.copy(grown, 0, 0, this.#records.length * LEAF_BYTES);
      this.#leaves = grown;
    }
    for (const stored of records) {
      const { record } = stored;
      this.#leaves.set(stored.leaf_hash, this.#records.length * LEAF_BYTES);
      this.#records.push(record);
      const list = this.#runRecords.get(record.run_id);
      if (list) list.push(record);
      else this.#runRecords.set(record.run_id, [record]);
      this.#headDigests.set(record.run_id, stored.digest);
    }
  }
  async ledgerSize(): Promise<number> {
    return this.#records.length;
  }
  async readRecords(from: number, to: number): Promise<LedgerRecord[]> {
    return this.#records.slice(from, to).map(clone);
  }
  async readRunRecords(runId: string): Promise<LedgerRecord[]> {
    return (this.#runRecords.get(runId) ?? []).map(clone);
  }
  async readLeafHashes(from: number, to: number): Promise<Uint8Array[]> {
    const start = Math.max(0, from);
    const end = Math.min(to, this.#records.length);
    const hashes: Uint8Array[] = [];
    // Views of the packed hashes (bytes written once, never changed; a grown buffer leaves them
    // on the old one), as the store handed out its own buffers before.
    for (let seq = start; seq < end; seq++)
      hashes.push(this.#leaves.subarray(seq * LEAF_BYTES, (seq + 1) * LEAF_BYTES));
    return hashes;
  }
  async runHead(runId: string): Promise<RunHead | undefined> {
    const last = this.#runRecords.get(runId)?.at(-1);
    const digest = this.#headDigests.get(runId);
    return last && digest !== undefined ? { run_seq: last.run_seq, digest } : undefined;
  }

  async updateCheckpointNote(size: number, note: string): Promise<boolean> {
    const row = this.#checkpoints.find((checkpoint) => checkpoint.size === size);
    if (!row) return false;
    row.note = note;
    return true;
  }
  async putCheckpoint(checkpoint: CheckpointRow): Promise<void> {
    this.#checkpoints.push(clone(checkpoint));
    this.#checkpoints.sort((a, b) => a.size - b.size);
  }
  async latestCheckpoint(): Promise<CheckpointRow | undefined> {
    const last = this.#checkpoints.at(-1);
    return last && clone(last);
  }
  async listCheckpoints(fromSize: number, toSize: number): Promise<CheckpointRow[]> {
    return this.#checkpoints.filter((c) => c.size >= fromSize && c.size <= toSize).map(clone);
  }

  async putOpenings(openings: Opening[]): Promise<void> {
    for (const opening of openings) this.#openings.set(opening.commitment, clone(opening));
  }
  async getOpenings(commitments: string[]): Promise<Opening[]> {
    return commitments.flatMap((c) => {
      const opening = this.#openings.get(c);
      return opening ? [clone(opening)] : [];
    });
  }

  async putApiKey(key: ApiKeyRow): Promise<void> {
    for (const existing of this.#keys.values()) {
      if (existing.name === key.name && existing.revoked_at === undefined)
        throw new Error(`an API key named ${key.name} exists`);
    }
    this.#keys.set(key.key_hash, clone(key));
  }
  async getApiKey(keyHash: string): Promise<ApiKeyRow | undefined> {
    const key = this.#keys.get(keyHash);
    return key && clone(key);
  }
  async listApiKeys(): Promise<ApiKeyRow[]> {
    return [...this.#keys.values()].sort((a, b) => a.created_at - b.created_at).map(clone);
  }
  async revokeApiKey(name: string, revokedAt: number): Promise<boolean> {
    for (const key of this.#keys.values()) {
      if (key.name === name && key.revoked_at === undefined) {
        key.revoked_at = revokedAt;
        return true;
      }
    }
    return false;
  }

  async getMeta(key: string): Promise<string | undefined> {
    return this.#meta.get(key);
  }
  async setMeta(key: string, value: string): Promise<void> {
    this.#meta.set(key, value);
  }

  async close(): Promise<void> {}
}
