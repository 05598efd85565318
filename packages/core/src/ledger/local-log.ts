// The ledger of a log one engine owns (SQLite, memory): this process assigns every record's place
// (seq, run_seq, prev), keeps the run heads and the Merkle frontier, and signs checkpoints off the
// hot path. Appends made in the same tick go to the store in one write (group commit). Use through
// `Ledger`, which delegates here (or to `SharedLog` for a store with a sequencer).
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
import type { CompactRange } from './merkle.js';
import type { ResolveAppend } from './observe.js';
import { buildRecord, sealRecord } from './record.js';
import { assertLedgerRecord } from './record-validator.js';
import type { SharedLogOptions } from './shared-log.js';
import { type LogSigner, openCheckpoint } from './signed-note.js';

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

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A log this process owns; see the file header and `Ledger` (its durability contract). */
export class LocalLog {
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

  private constructor(
    store: Store,
    options: SharedLogOptions,
    size: number,
    frontier: CompactRange,
    latest: CheckpointRow | undefined,
    format: RecordFormat,
  ) {
    this.#store = store;
    this.#format = format;
    this.#signer = options.signer;
    this.#origin = options.origin;
    this.#clock = options.clock;
    this.#validate = options.validate;
    this.#nextSeq = size;
    this.#durableSize = size;
    const settings = {
      store,
      signer: options.signer,
      origin: options.origin,
      clock: options.clock,
      everyRecords: options.everyRecords,
      everyMs: options.everyMs,
      onError: options.onError,
      durableSize: () => this.#durableSize,
    };
    this.#checkpointer = new Checkpointer(settings, frontier, latest);
  }

  /**
   * Opens the log of `store`, resuming where it stopped: size from the store, Merkle frontier
   * rebuilt from its leaf hashes (from the last checkpoint's saved frontier when there is one) and
   * checked against the latest checkpoint; run heads load on each run's first use.
   * @throws CallgateError `ledger-invalid` when the store's log has another origin, lost records a
   *   checkpoint covers, contradicts its latest checkpoint, or lost its arguments secret.
   */
  static async open(store: Store, options: SharedLogOptions): Promise<LocalLog> {
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
    return new LocalLog(store, options, size, frontier, ours, format);
  }

  /** Records acknowledged by the store (durable). */
  get size(): number {
    return this.#durableSize;
  }

  get latestCheckpoint(): CheckpointRow | undefined {
    return this.#checkpointer.latest;
  }

  /** Appends (see `Ledger.append`); settles through `resolve` (with the record's chain digest) or `reject`. */
  append(runId: string, body: RecordBody, resolve: ResolveAppend, reject: (error: unknown) => void): void {
    this.#append(runId, body, resolve, reject);
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

  async flush(): Promise<void> {
    if (this.#loads.size > 0) await Promise.allSettled([...this.#loads]);
    const target = this.#enqueued;
    if (this.#settled >= target) return;
    await new Promise<void>((resolve) => this.#barriers.push({ target, resolve }));
  }

  async checkpoint(): Promise<CheckpointRow | undefined> {
    await this.flush();
    return this.#checkpointer.sign();
  }

  async exportRun(runId: string, options: RunExportOptions = {}): Promise<AnyBundle> {
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

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.flush();
    this.#checkpointer.stop();
    await this.#checkpointer.sign();
  }
}
