// The ledger: an append-only log of records, hash-chained per run (RFC 8785 canonical JSON,
// sha256 digests) and leaves of one RFC 9162 Merkle tree, with C2SP checkpoints signed off the
// hot path. Appends made in the same tick go to the store in one write (group commit).
import {
  type AnyBundle,
  CallgateError,
  isCallgateError,
  type LedgerRecord,
  type RecordBody,
} from '@callgate/protocol';
import type { CheckpointRow, RunHead, Store, StoredRecord } from '../store/store.js';
import { openRecordFormat, type RecordFormat } from './arguments-key.js';
import { Checkpointer } from './checkpointer.js';
import { exportRunBundle, type RunExportOptions } from './export.js';
import { restoreFrontier } from './frontier-store.js';
import { CompactRange } from './merkle.js';
import { type AppendObserver, type ResolveAppend, tellObservers } from './observe.js';
import { buildRecord, sealRecord } from './record.js';
import { assertLedgerRecord } from './record-validator.js';
import { SharedLog } from './shared-log.js';
import { formatCheckpoint, type LogSigner, openCheckpoint } from './signed-note.js';

/** Options of {@link Ledger.open}. */
export interface LedgerOptions {
  /** The key that signs checkpoints. Its `verifierKey` is what verifiers pin. */
  signer: LogSigner;
  /** The log's origin: the first line of its checkpoints (e.g. `callgate.example.com/log`). */
  origin: string;
  /** Epoch milliseconds for record `ts` and checkpoint times. Default `Date.now`. */
  clock?: () => number;
  /** Sign a checkpoint once this many records are unsigned. Default 1000. */
  checkpointEveryRecords?: number;
  /** Sign a checkpoint at most this many ms after a record is acknowledged. Default 1000 ms. */
  checkpointEveryMs?: number;
  /** Receives errors of background checkpoints (nothing else reports them). Default: ignored. */
  onError?: (error: unknown) => void;
  /**
   * Check each record against `ledgerRecordSchema` before it is written, so that nothing the
   * verifier would refuse is ever recorded. Default true.
   */
  validate?: boolean;
}

/** Store meta key of the log's origin, fixed at the first open. */
export const ORIGIN_META_KEY = 'ledger:origin';

interface PendingAppend {
  stored: StoredRecord;
  /** The run's head before this record: restored if the write fails. */
  previous: RunHead | null;
  resolve: ResolveAppend;
  reject: (error: unknown) => void;
}

interface WaitingAppend {
  body: RecordBody;
  resolve: ResolveAppend;
  reject: (error: unknown) => void;
}

const noop = (): void => {};

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * An open ledger over a {@link Store}. One `Ledger` per log per process: it assigns `seq`. On a
 * store with a sequencer (a log several engines share, e.g. PostgreSQL), the store assigns `seq`,
 * `run_seq`, `prev` and the frontier in its transactions instead, and only the engine holding the
 * store's checkpoint lease signs checkpoints (see `SharedLog`).
 *
 * Durability: `append` resolves only after the store's `appendRecords` call holding the record
 * resolved, so an acknowledged record is durable per the store's `synchronous` mode. When a write
 * fails, every append not yet durable rejects and the ledger returns to the last durable state.
 */
export class Ledger {
  readonly #store: Store;
  readonly #signer: LogSigner;
  readonly #origin: string;
  readonly #clock: () => number;
  readonly #validate: boolean;
  readonly #checkpointer: Checkpointer;
  /** The record version this log writes, and its run keys (version 2). */
  readonly #format: RecordFormat;
  #nextSeq: number;
  #durableSize: number;
  /** Known run heads; `null` for a run known to have no records. */
  readonly #heads = new Map<string, RunHead | null>();
  /** Appends waiting for their run's head to load from the store, per run, in call order. */
  readonly #waiting = new Map<string, WaitingAppend[]>();
  readonly #loads = new Set<Promise<void>>();
  #queue: PendingAppend[] = [];
  #writing = false;
  #scheduled = false;
  #enqueued = 0;
  #settled = 0;
  #barriers: Array<{ target: number; resolve: () => void }> = [];
  #closed = false;
  #observers: readonly AppendObserver[] = [];
  /** Set when the store's log is shared (it has a sequencer): everything is delegated to it. */
  #shared: SharedLog | undefined;

  private constructor(
    store: Store,
    options: LedgerOptions,
    size: number,
    frontier: CompactRange,
    latest: CheckpointRow | undefined,
    format: RecordFormat,
  ) {
    this.#store = store;
    this.#format = format;
    this.#signer = options.signer;
    this.#origin = options.origin;
    this.#clock = options.clock ?? Date.now;
    this.#validate = options.validate ?? true;
    this.#nextSeq = size;
    this.#durableSize = size;
    const settings = {
      store,
      signer: options.signer,
      origin: options.origin,
      clock: this.#clock,
      everyRecords: options.checkpointEveryRecords ?? 1000,
      everyMs: options.checkpointEveryMs ?? 1000,
      onError: options.onError ?? noop,
      durableSize: () => this.#durableSize,
    };
    this.#checkpointer = new Checkpointer(settings, frontier, latest);
  }

  /**
   * Opens the ledger of `store`, resuming where it stopped: size from the store, Merkle frontier
   * rebuilt from its leaf hashes (from the last checkpoint's saved frontier when there is one) and
   * checked against the latest checkpoint; run heads load on each run's first use.
   * @throws CallgateError `request-invalid` for bad options; `ledger-invalid` when the store's log
   *   has another origin, lost records a checkpoint covers, or contradicts its latest checkpoint.
   */
  static async open(store: Store, options: LedgerOptions): Promise<Ledger> {
    formatCheckpoint({ origin: options.origin, size: 0, root: new Uint8Array(32) });
    for (const [name, value] of [
      ['checkpointEveryRecords', options.checkpointEveryRecords],
      ['checkpointEveryMs', options.checkpointEveryMs],
    ] as const) {
      if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1))
        throw new CallgateError('request-invalid', `${name} must be a positive integer, got ${value}`);
    }
    if (store.sequencer !== undefined) {
      const shared = await SharedLog.open(store, store.sequencer, {
        signer: options.signer,
        origin: options.origin,
        clock: options.clock ?? Date.now,
        validate: options.validate ?? true,
        everyRecords: options.checkpointEveryRecords ?? 1000,
        everyMs: options.checkpointEveryMs ?? 1000,
        onError: options.onError ?? noop,
      });
      const ledger = new Ledger(store, options, 0, new CompactRange(), undefined, shared.format);
      ledger.#shared = shared;
      return ledger;
    }
    const origin = await store.getMeta(ORIGIN_META_KEY);
    if (origin !== undefined && origin !== options.origin)
      throw new CallgateError(
        'ledger-invalid',
        `the store's log has origin ${origin}, not ${options.origin}`,
      );
    if (origin === undefined) await store.setMeta(ORIGIN_META_KEY, options.origin);
    const size = await store.ledgerSize();
    const format = await openRecordFormat(store, size, async (key, value) => {
      await store.setMeta(key, value);
      return value;
    });
    const latest = await store.latestCheckpoint();
    const frontier = await restoreFrontier(store, size, latest);
    const opened = latest === undefined ? undefined : openCheckpoint(latest.note, options.signer.verifierKey);
    // A checkpoint signed by another key (before a key change) is not ours to hand out.
    const ours = opened?.ok === true && opened.value.origin === options.origin ? latest : undefined;
    return new Ledger(store, options, size, frontier, ours, format);
  }

  /** Records acknowledged by the store (durable). */
  get size(): number {
    if (this.#shared) return this.#shared.size;
    return this.#durableSize;
  }

  /** The latest checkpoint this ledger signed or resumed, if any. */
  get latestCheckpoint(): CheckpointRow | undefined {
    if (this.#shared) return this.#shared.latestCheckpoint;
    return this.#checkpointer.latest;
  }

  /**
   * Appends a record to run `runId`: assigns `v: 1`, `seq` (log-wide, 0-based, its Merkle leaf
   * index), `run_seq`, `ts` (epoch ms) and `prev` (the digest of the run's previous record, or
   * null). Appends to one run chain in call order, also when made concurrently. Resolves with the
   * record once the store write that holds it resolved; the ledger keeps the body's values by
   * reference, so do not change them afterwards.
   * @throws CallgateError `ledger-invalid` when the record does not match `ledgerRecordSchema`;
   *   `tool-args-invalid` when it has no canonical JSON form; `internal` when the store write
   *   failed or the ledger is closed.
   */
  append(runId: string, body: RecordBody): Promise<LedgerRecord> {
    if (this.#observers.length > 0) return this.#observedAppend(runId, body);
    if (this.#shared) return this.#shared.append(runId, body);
    return new Promise((resolve, reject) => this.#append(runId, body, resolve, reject));
  }

  /**
   * Adds an observer of every append (metrics, traces); returns the function that removes it.
   * An observer that throws is ignored: observing never changes what is recorded.
   */
  observeAppends(observer: AppendObserver): () => void {
    this.#observers = [...this.#observers, observer];
    return () => {
      this.#observers = this.#observers.filter((other) => other !== observer);
    };
  }

  #observedAppend(runId: string, body: RecordBody): Promise<LedgerRecord> {
    const { resolve, reject } = tellObservers(this.#observers, runId, body);
    if (this.#shared) {
      return this.#shared.append(runId, body).then(
        (record) => {
          resolve(record, sealRecord(record).digest);
          return record;
        },
        (error: unknown) => {
          reject(error);
          throw error;
        },
      );
    }
    return new Promise((done, fail) =>
      this.#append(
        runId,
        body,
        (record, digest) => {
          resolve(record, digest);
          done(record);
        },
        (error) => {
          reject(error);
          fail(error);
        },
      ),
    );
  }

  #append(runId: string, body: RecordBody, resolve: ResolveAppend, reject: (error: unknown) => void): void {
    if (this.#closed) {
      reject(new CallgateError('internal', 'the ledger is closed'));
      return;
    }
    const waiting = this.#waiting.get(runId);
    if (waiting !== undefined) waiting.push({ body, resolve, reject });
    else if (this.#heads.has(runId)) this.#enqueue(runId, body, resolve, reject);
    else {
      this.#waiting.set(runId, [{ body, resolve, reject }]);
      this.#loadHead(runId);
    }
  }

  #loadHead(runId: string): void {
    const release = (): WaitingAppend[] => {
      const list = this.#waiting.get(runId) ?? [];
      this.#waiting.delete(runId);
      return list;
    };
    let head: Promise<RunHead | undefined>;
    try {
      head = this.#store.runHead(runId);
    } catch (error) {
      head = Promise.reject(error);
    }
    const load = head.then(
      (head) => {
        if (!this.#heads.has(runId))
          this.#heads.set(runId, head === undefined ? null : { run_seq: head.run_seq, digest: head.digest });
        for (const entry of release()) this.#enqueue(runId, entry.body, entry.resolve, entry.reject);
      },
      (error: unknown) => {
        const failure = new CallgateError(
          'internal',
          `could not read the head of run ${runId}: ${describe(error)}`,
          {},
          { cause: error },
        );
        for (const entry of release()) entry.reject(failure);
      },
    );
    this.#loads.add(load);
    void load.finally(() => this.#loads.delete(load));
  }

  #enqueue(runId: string, body: RecordBody, resolve: ResolveAppend, reject: (error: unknown) => void): void {
    const previous = this.#heads.get(runId) ?? null;
    let record: LedgerRecord;
    let stored: StoredRecord;
    try {
      const { version, keys } = this.#format;
      record = buildRecord(keys === undefined ? body : keys.keyBody(runId, body), [
        previous === null ? null : previous.digest,
        runId,
        previous === null ? 0 : previous.run_seq + 1,
        this.#nextSeq,
        this.#clock(),
        version,
      ]);
      if (this.#validate) assertLedgerRecord(record);
      stored = sealRecord(record);
    } catch (error) {
      reject(error);
      return;
    }
    this.#nextSeq += 1;
    this.#enqueued += 1;
    this.#heads.set(runId, { run_seq: record.run_seq, digest: stored.digest });
    this.#checkpointer.push(stored.leaf_hash);
    this.#queue.push({ stored, previous, resolve, reject });
    if (!this.#scheduled && !this.#writing) {
      this.#scheduled = true;
      // After the promise jobs of this turn (every decision running concurrently appends before
      // it), so that they share one store write; a store that commits at the end of the turn
      // (SqliteStore) then commits it together with their other writes.
      process.nextTick(this.#drain);
    }
  }

  /** Writes everything queued in one `appendRecords` call (group commit); one write at a time. */
  readonly #drain = (): void => {
    this.#scheduled = false;
    if (this.#writing || this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#writing = true;
    let write: Promise<void>;
    try {
      write = this.#store.appendRecords(batch.map((pending) => pending.stored));
    } catch (error) {
      write = Promise.reject(error);
    }
    write.then(
      () => this.#committed(batch),
      (error: unknown) => this.#failed(batch, error),
    );
  };

  #committed(batch: PendingAppend[]): void {
    this.#writing = false;
    this.#durableSize += batch.length;
    this.#settled += batch.length;
    for (const pending of batch) {
      const record = pending.stored.record;
      pending.resolve(record, pending.stored.digest);
      // An ended run's head is dropped (it reloads from the store if the run ever continues).
      if (record.type === 'run-end' && this.#heads.get(record.run_id)?.digest === pending.stored.digest)
        this.#heads.delete(record.run_id);
    }
    this.#checkpointer.committed();
    if (this.#queue.length > 0) this.#drain();
    this.#releaseBarriers();
  }

  #failed(batch: PendingAppend[], error: unknown): void {
    this.#writing = false;
    // Everything not durable fails: later records were chained onto the failed ones.
    const failed = batch.concat(this.#queue);
    this.#queue = [];
    for (let i = failed.length - 1; i >= 0; i--) {
      const pending = failed[i] as PendingAppend;
      this.#heads.set(pending.stored.record.run_id, pending.previous);
    }
    this.#nextSeq = this.#durableSize;
    this.#checkpointer.truncate(this.#durableSize);
    this.#settled += failed.length;
    const failure = new CallgateError(
      isCallgateError(error) && error.kind === 'store-unavailable' ? 'store-unavailable' : 'internal',
      `ledger write failed, ${failed.length} record(s) not recorded: ${describe(error)}`,
      {},
      { cause: error },
    );
    for (const pending of failed) pending.reject(failure);
    this.#releaseBarriers();
  }

  #releaseBarriers(): void {
    while (this.#barriers.length > 0 && (this.#barriers[0]?.target ?? 0) <= this.#settled) {
      this.#barriers.shift()?.resolve();
    }
  }

  /**
   * Resolves once every append made before the call has settled (durable, or rejected). Never
   * rejects: a failed append reports through its own promise.
   */
  async flush(): Promise<void> {
    if (this.#shared) return this.#shared.flush();
    if (this.#loads.size > 0) await Promise.allSettled([...this.#loads]);
    const target = this.#enqueued;
    if (this.#settled >= target) return;
    await new Promise<void>((resolve) => this.#barriers.push({ target, resolve }));
  }

  /**
   * Flushes, then signs a checkpoint of the whole durable log (C2SP tlog-checkpoint) unless the
   * latest already covers it. Returns the latest checkpoint, or undefined for an empty log.
   * @throws the store's error when the checkpoint could not be stored.
   */
  async checkpoint(): Promise<CheckpointRow | undefined> {
    if (this.#shared) return this.#shared.checkpoint();
    await this.flush();
    return this.#checkpointer.sign();
  }

  /**
   * Exports run `runId` as a `callgate-bundle/2` (or `/1` with `proofs`): flushes, signs a fresh checkpoint when the
   * latest is stale, then gathers the run's records, one RFC 9162 inclusion proof per record
   * under that checkpoint, the earliest checkpoint covering the whole run and a consistency proof
   * from it, the policy documents (store meta `policy:<digest>`, see `putPolicyDocument`), and with
   * `openings: true` the openings of the run's commitments. Records appended after the checkpoint
   * are not included. Cost: one pass over the log's leaf hashes.
   * @throws CallgateError `not-found` when the run has no records; `ledger-invalid` when the store
   *   contradicts its checkpoints.
   */
  async exportRun(runId: string, options: RunExportOptions = {}): Promise<AnyBundle> {
    if (this.#shared) return this.#shared.exportRun(runId, options);
    await this.flush();
    const latest = await this.#checkpointer.sign();
    if (latest === undefined) throw new CallgateError('not-found', `run ${runId} has no records in the log`);
    return exportRunBundle(
      {
        store: this.#store,
        signer: this.#signer,
        origin: this.#origin,
        exportedAt: this.#clock(),
        latest,
        keys: this.#format.keys,
      },
      runId,
      options,
    );
  }

  /**
   * Refuses new appends, flushes, waits for background checkpoints and signs a final one. Does not
   * close the store. Idempotent.
   * @throws the store's error when the final checkpoint could not be stored.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#shared) return this.#shared.close();
    await this.flush();
    this.#checkpointer.stop();
    await this.#checkpointer.sign();
  }
}
