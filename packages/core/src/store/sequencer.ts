// What a store offers when several engines (server replicas) share its log: it assigns each
// record's place in the log inside its own transactions, keeps the Merkle frontier there too, and
// holds the lease under which exactly one engine signs checkpoints.
import type { CheckpointRow, StoredRecord } from './store.js';

/** Where a record lands: its log-wide `seq`, its `run_seq` and the digest of its run's previous record. */
export interface LogPosition {
  seq: number;
  run_seq: number;
  /** `sha256:<hex>` of the run's previous record's canonical JSON; null for the run's first. */
  prev: string | null;
}

/** One record to append: its run, and how to build and seal it once its position is known. */
export interface SequencedAppend {
  run_id: string;
  /**
   * Builds the record at `position` and seals it (RFC 8785 bytes, RFC 9162 leaf hash, digest).
   * Called inside the store's transaction, synchronously; throws when the record is invalid.
   */
  seal: (position: LogPosition) => StoredRecord;
}

/** The log's state as of one committed transaction. */
export interface LogFrontier {
  size: number;
  /** RFC 9162 perfect subtree roots of the first `size` leaves, leftmost (largest) first. */
  hashes: Uint8Array[];
}

/**
 * A store's log sequencer (see `Store.sequencer`). Positions, run chains and the frontier are
 * assigned in the store's transactions, never from a counter held in one process: any number of
 * engines may append to one log at once and it stays one log.
 */
export interface LogSequencer {
  /**
   * Appends one record per entry, in entry order, in one transaction: for each entry it takes
   * the log's next `seq` and the head of the entry's run as of that transaction, calls `seal`,
   * stores the record and folds its leaf hash into the stored frontier. Resolves once committed
   * (durable) with, per entry, the stored record, or the error its `seal` threw (that entry took
   * no position and nothing of it was stored).
   * @throws the store's error when the transaction failed: then nothing of the batch was stored.
   */
  append(entries: SequencedAppend[]): Promise<Array<StoredRecord | Error>>;
  /** The committed log size and frontier, read together. */
  frontier(): Promise<LogFrontier>;
  /**
   * Stores `value` under meta `key` unless a value is already there (atomic across engines);
   * returns the value stored, whoever stored it.
   */
  claimMeta(key: string, value: string): Promise<string>;
  /**
   * Tries to take (or keep) the checkpoint lease. Returns true while this engine holds it. The
   * lease ends when the store's connection that holds it ends (the engine's process died, or the
   * database dropped it); it then reports false until it is taken again.
   */
  holdLease(): Promise<boolean>;
  /**
   * Under the lease, in one transaction: reads the committed frontier and the latest checkpoint,
   * calls `sign`, and stores the checkpoint it returns (when it returns one). Returns the latest
   * checkpoint afterwards, or `undefined` when the lease is not held (nothing is signed then).
   * @throws CallgateError `ledger-invalid` when a checkpoint of that size with another root exists.
   */
  signUnderLease(
    sign: (frontier: LogFrontier, latest: CheckpointRow | undefined) => CheckpointRow | undefined,
  ): Promise<CheckpointRow | undefined>;
  /** Gives the lease up (at close). */
  releaseLease(): Promise<void>;
}
