// The ledger: an append-only log of records, hash-chained per run (RFC 8785 canonical JSON; record
// format version 2 chains on the RFC 9162 leaf hash) and leaves of one RFC 9162 Merkle tree, with
// C2SP checkpoints signed off the hot path. The log is either this process's own (`LocalLog`) or
// shared with other engines through the store's sequencer (`SharedLog`); observers see every append.
import { type AnyBundle, CallgateError, type LedgerRecord, type RecordBody } from '@callgate/protocol';
import type { CheckpointRow, Store } from '../store/store.js';
import type { RunExportOptions } from './export.js';
import { LocalLog } from './local-log.js';
import { type AppendObserver, tellObservers } from './observe.js';
import { sealRecord } from './record.js';
import { SharedLog, type SharedLogOptions } from './shared-log.js';
import { formatCheckpoint, type LogSigner } from './signed-note.js';

export { ORIGIN_META_KEY } from './local-log.js';

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

const noop = (): void => {};

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
  readonly #log: LocalLog | SharedLog;
  #observers: readonly AppendObserver[] = [];

  private constructor(log: LocalLog | SharedLog) {
    this.#log = log;
  }

  /**
   * Opens the ledger of `store`, resuming where it stopped (see `LocalLog.open`, or for a store
   * with a sequencer `SharedLog.open`).
   * @throws CallgateError `request-invalid` for bad options; `ledger-invalid` when the store's log
   *   has another origin, lost records a checkpoint covers, contradicts its latest checkpoint, or
   *   lost its arguments secret.
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
    const settings: SharedLogOptions = {
      signer: options.signer,
      origin: options.origin,
      clock: options.clock ?? Date.now,
      validate: options.validate ?? true,
      everyRecords: options.checkpointEveryRecords ?? 1000,
      everyMs: options.checkpointEveryMs ?? 1000,
      onError: options.onError ?? noop,
    };
    return new Ledger(
      store.sequencer !== undefined
        ? await SharedLog.open(store, store.sequencer, settings)
        : await LocalLog.open(store, settings),
    );
  }

  /** Records acknowledged by the store (durable). */
  get size(): number {
    return this.#log.size;
  }

  /** The latest checkpoint this ledger signed or resumed, if any. */
  get latestCheckpoint(): CheckpointRow | undefined {
    return this.#log.latestCheckpoint;
  }

  /**
   * Appends a record to run `runId`: assigns `v` (the log's record format, 2 for a new log), `seq` (log-wide, 0-based, its Merkle leaf
   * index), `run_seq`, `ts` (epoch ms) and `prev` (the chain digest of the run's previous record, or
   * null). Appends to one run chain in call order, also when made concurrently. Resolves with the
   * record once the store write that holds it resolved; the ledger keeps the body's values by
   * reference, so do not change them afterwards.
   * @throws CallgateError `ledger-invalid` when the record does not match `ledgerRecordSchema`;
   *   `tool-args-invalid` when it has no canonical JSON form; `internal` when the store write
   *   failed or the ledger is closed.
   */
  append(runId: string, body: RecordBody): Promise<LedgerRecord> {
    if (this.#observers.length > 0) return this.#observedAppend(runId, body);
    const log = this.#log;
    if (log instanceof SharedLog) return log.append(runId, body);
    return new Promise((resolve, reject) => log.append(runId, body, resolve, reject));
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
    const log = this.#log;
    if (log instanceof SharedLog) {
      return log.append(runId, body).then(
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
      log.append(
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

  /**
   * Resolves once every append made before the call has settled (durable, or rejected). Never
   * rejects: a failed append reports through its own promise.
   */
  flush(): Promise<void> {
    return this.#log.flush();
  }

  /**
   * Flushes, then signs a checkpoint of the whole durable log (C2SP tlog-checkpoint) unless the
   * latest already covers it. Returns the latest checkpoint, or undefined for an empty log.
   * @throws the store's error when the checkpoint could not be stored.
   */
  checkpoint(): Promise<CheckpointRow | undefined> {
    return this.#log.checkpoint();
  }

  /**
   * Exports run `runId` as a `callgate-bundle/3` (or `/1` with `proofs`): flushes, signs a fresh
   * checkpoint when the latest is stale, then gathers the run's records, one batch inclusion proof
   * of them under that checkpoint (one RFC 9162 proof per record with `proofs`), the earliest
   * checkpoint covering the whole run and a consistency proof from it, the policy documents (store
   * meta `policy:<digest>`, see `putPolicyDocument`), a manifest signed by the log key, with
   * `openings: true` the openings of the run's commitments, and with `openings` or
   * `revealRunKeys` the run's key. Records appended after the checkpoint are not included. Cost:
   * one pass over the log's leaf hashes.
   * @throws CallgateError `not-found` when the run has no records; `ledger-invalid` when the store
   *   contradicts its checkpoints.
   */
  exportRun(runId: string, options: RunExportOptions = {}): Promise<AnyBundle> {
    return this.#log.exportRun(runId, options);
  }

  /**
   * Refuses new appends, flushes, waits for background checkpoints and signs a final one. Does not
   * close the store. Idempotent.
   * @throws the store's error when the final checkpoint could not be stored.
   */
  close(): Promise<void> {
    return this.#log.close();
  }
}
