// The ledger of a log that several engines share (server replicas on one PostgreSQL): every
// record's place (seq, run_seq, prev) and the Merkle frontier come from the store's transactions
// (its LogSequencer), and checkpoints are signed only by the engine holding the store's lease.
// Appends made in the same tick still go to the store in one transaction (group commit).
import { type AnyBundle, CallgateError, type LedgerRecord, type RecordBody } from '@callgate/protocol';
import type { LogPosition, LogSequencer } from '../store/sequencer.js';
import type { CheckpointRow, Store, StoredRecord } from '../store/store.js';
import { openRecordFormat, type RecordFormat } from './arguments-key.js';
import { exportRunBundle, type RunExportOptions } from './export.js';
import { CompactRange } from './merkle.js';
import { buildRecord, sealRecord } from './record.js';
import { assertLedgerRecord } from './record-validator.js';
import { type LogSigner, openCheckpoint, signCheckpoint } from './signed-note.js';

/** Store meta keys a shared log claims at its first open. */
export const SHARED_ORIGIN_META_KEY = 'ledger:origin';
export const SHARED_VERIFIER_META_KEY = 'ledger:verifier-key';

/** What a {@link SharedLog} needs. */
export interface SharedLogOptions {
  signer: LogSigner;
  origin: string;
  clock: () => number;
  validate: boolean;
  everyRecords: number;
  everyMs: number;
  onError: (error: unknown) => void;
}

interface Pending {
  runId: string;
  body: RecordBody;
  resolve: (record: LedgerRecord) => void;
  reject: (error: unknown) => void;
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long {@link SharedLog.checkpoint} waits for the lease holder's checkpoint, in ms. */
const CHECKPOINT_WAIT_MS = 15_000;

/** One engine's view of a shared log. Use through `Ledger` (it delegates here). */
export class SharedLog {
  readonly #store: Store;
  readonly #sequencer: LogSequencer;
  readonly #options: SharedLogOptions;
  #queue: Pending[] = [];
  #scheduled = false;
  #writing: Promise<void> | undefined;
  #size = 0;
  #latest: CheckpointRow | undefined;
  #unsigned = 0;
  readonly #timer: NodeJS.Timeout;
  #signing: Promise<CheckpointRow | undefined> | undefined;
  #closed = false;
  /** The record version this log writes, and its run keys (version 2). */
  readonly format: RecordFormat;

  private constructor(
    store: Store,
    sequencer: LogSequencer,
    options: SharedLogOptions,
    size: number,
    format: RecordFormat,
  ) {
    this.#store = store;
    this.format = format;
    this.#sequencer = sequencer;
    this.#options = options;
    this.#size = size;
    this.#timer = setInterval(() => {
      this.#tick().catch(options.onError);
    }, options.everyMs);
    this.#timer.unref();
  }

  /**
   * Opens the shared log: claims its origin and the signer's verifier key in the store (the first
   * engine to open the log fixes both), so that no engine signs the log's checkpoints under
   * another key.
   * @throws CallgateError `ledger-invalid` when the log has another origin or another key.
   */
  static async open(store: Store, sequencer: LogSequencer, options: SharedLogOptions): Promise<SharedLog> {
    const origin = await sequencer.claimMeta(SHARED_ORIGIN_META_KEY, options.origin);
    if (origin !== options.origin)
      throw new CallgateError(
        'ledger-invalid',
        `the store's log has origin ${origin}, not ${options.origin}`,
      );
    const key = await sequencer.claimMeta(SHARED_VERIFIER_META_KEY, options.signer.verifierKey);
    if (key !== options.signer.verifierKey)
      throw new CallgateError(
        'ledger-invalid',
        `the store's log is signed by key ${key}, not ${options.signer.verifierKey}: every replica must use the log's one key (a shared key file, or the key kept in the database)`,
      );
    const { size } = await sequencer.frontier();
    const format = await openRecordFormat(store, size, (name, value) => sequencer.claimMeta(name, value));
    const log = new SharedLog(store, sequencer, options, size, format);
    log.#latest = await store.latestCheckpoint();
    return log;
  }

  /** Records this engine knows to be durable (the log size after its latest commit or read). */
  get size(): number {
    return this.#size;
  }

  get latestCheckpoint(): CheckpointRow | undefined {
    return this.#latest;
  }

  append(runId: string, body: RecordBody): Promise<LedgerRecord> {
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new CallgateError('internal', 'the ledger is closed'));
        return;
      }
      this.#queue.push({ runId, body, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        process.nextTick(() => {
          this.#scheduled = false;
          this.#drain();
        });
      }
    });
  }

  #seal(pending: Pending, position: LogPosition): StoredRecord {
    const { version, keys } = this.format;
    const record = buildRecord(
      keys === undefined ? pending.body : keys.keyBody(pending.runId, pending.body),
      [position.prev, pending.runId, position.run_seq, position.seq, this.#options.clock(), version],
    );
    if (this.#options.validate) assertLedgerRecord(record);
    return sealRecord(record);
  }

  /** Writes the queue in one sequenced transaction; one at a time (appends keep call order). */
  #drain(): void {
    if (this.#writing !== undefined || this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    const entries = batch.map((pending) => ({
      run_id: pending.runId,
      seal: (position: LogPosition) => this.#seal(pending, position),
    }));
    let write: Promise<Array<StoredRecord | Error>>;
    try {
      write = this.#sequencer.append(entries);
    } catch (error) {
      write = Promise.reject(error);
    }
    this.#writing = write.then(
      (results) => {
        results.forEach((result, index) => {
          const pending = batch[index] as Pending;
          if (result instanceof Error) pending.reject(result);
          else {
            this.#size = Math.max(this.#size, result.record.seq + 1);
            this.#unsigned += 1;
            pending.resolve(result.record);
          }
        });
      },
      (error: unknown) => {
        // An unreachable store keeps its kind: the gate is unavailable, and says so.
        const kind =
          error instanceof CallgateError && error.kind === 'gate-unavailable' ? error.kind : 'internal';
        const failure = new CallgateError(
          kind,
          `ledger write failed, ${batch.length} record(s) not recorded: ${describe(error)}`,
          {},
          { cause: error },
        );
        for (const pending of batch) pending.reject(failure);
      },
    );
    void this.#writing.finally(() => {
      this.#writing = undefined;
      if (this.#unsigned >= this.#options.everyRecords) this.#tick().catch(this.#options.onError);
      this.#drain();
    });
  }

  /** Resolves once every append made before the call has settled. Never rejects. */
  async flush(): Promise<void> {
    while (this.#queue.length > 0 || this.#writing !== undefined || this.#scheduled) {
      if (this.#writing !== undefined) await this.#writing.catch(() => {});
      else await new Promise((resolve) => process.nextTick(resolve));
    }
  }

  /** The cadence: take the lease when it is free, and sign when holding it and records are unsigned. */
  async #tick(): Promise<void> {
    if (this.#closed && this.#signing === undefined) return;
    if (!(await this.#sequencer.holdLease())) {
      const latest = await this.#store.latestCheckpoint();
      if (latest !== undefined && (this.#latest === undefined || latest.size > this.#latest.size))
        this.#latest = latest;
      return;
    }
    await this.#signNow();
  }

  /** Signs under the lease (one signing at a time); undefined when the lease is not held. */
  #signNow(): Promise<CheckpointRow | undefined> {
    if (this.#signing !== undefined) return this.#signing;
    const { signer, origin, clock } = this.#options;
    this.#signing = this.#sequencer
      .signUnderLease((frontier, latest) => {
        if (frontier.size === 0 || (latest !== undefined && latest.size >= frontier.size)) return undefined;
        const root = new CompactRange(frontier.size, frontier.hashes).root();
        const note = signCheckpoint({ origin, size: frontier.size, root }, signer);
        return { size: frontier.size, root, note, ts: clock() };
      })
      .then((latest) => {
        if (latest !== undefined) {
          this.#unsigned = 0;
          if (this.#latest === undefined || latest.size >= this.#latest.size) this.#latest = latest;
          this.#size = Math.max(this.#size, latest.size);
        }
        return latest;
      })
      .finally(() => {
        this.#signing = undefined;
      });
    return this.#signing;
  }

  /**
   * Flushes, then returns a checkpoint covering every record committed so far (by any engine): signed here
   * when this engine holds (or can take) the lease, else the lease holder's next one.
   * @throws CallgateError `gate-unavailable` when no engine signed one within 15 s.
   */
  async checkpoint(): Promise<CheckpointRow | undefined> {
    await this.flush();
    // Everything committed by any engine so far, not only by this one: a run may have been
    // continued on another replica.
    const target = Math.max(this.#size, (await this.#sequencer.frontier()).size);
    if (target === 0) return this.#latest;
    const deadline = Date.now() + CHECKPOINT_WAIT_MS;
    for (;;) {
      if (this.#latest !== undefined && this.#latest.size >= target) return this.#latest;
      if (await this.#sequencer.holdLease()) await this.#signNow();
      else {
        const latest = await this.#store.latestCheckpoint();
        if (latest !== undefined && (this.#latest === undefined || latest.size > this.#latest.size))
          this.#latest = latest;
      }
      if (this.#latest !== undefined && this.#latest.size >= target) return this.#latest;
      if (Date.now() > deadline)
        throw new CallgateError(
          'gate-unavailable',
          `no checkpoint covering ${target} records was signed within ${CHECKPOINT_WAIT_MS} ms: no replica holds the checkpoint lease`,
        );
      await sleep(Math.min(50, this.#options.everyMs));
    }
  }

  /** Exports a run under a checkpoint covering every record this engine appended (see Ledger.exportRun). */
  async exportRun(runId: string, options: RunExportOptions = {}): Promise<AnyBundle> {
    const latest = await this.checkpoint();
    if (latest === undefined) throw new CallgateError('not-found', `run ${runId} has no records in the log`);
    const opened = openCheckpoint(latest.note, this.#options.signer.verifierKey);
    if (!opened.ok)
      throw new CallgateError('ledger-invalid', `the latest checkpoint is not signed by this log's key`);
    return exportRunBundle(
      {
        store: this.#store,
        signer: this.#options.signer,
        origin: this.#options.origin,
        exportedAt: this.#options.clock(),
        latest,
        keys: this.format.keys,
      },
      runId,
      options,
    );
  }

  /** Refuses new appends, flushes, signs a last checkpoint when holding the lease, gives it up. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.flush();
    try {
      if (await this.#sequencer.holdLease()) await this.#signNow();
    } finally {
      await this.#sequencer.releaseLease();
    }
  }
}
