// The ledger's Merkle frontier and checkpoint signing: leaf hashes wait in a list until their
// records are durable, then are folded into the frontier (RFC 9162) as each store write is
// acknowledged (about one SHA-256 per record, spread over the writes), so that signing a
// checkpoint (C2SP tlog-checkpoint, every N records or T ms) costs only the root and the
// signature: no fold of N leaves at once on the event loop. Rolling back unacknowledged records
// is a list truncation (only durable leaves are ever folded).
import { CallgateError } from '@callgate/protocol';
import type { CheckpointRow, Store } from '../store/store.js';
import { saveFrontier } from './frontier-store.js';
import type { CompactRange } from './merkle.js';
import { type LogSigner, signCheckpoint } from './signed-note.js';

/** What a {@link Checkpointer} signs with and how often. */
export interface CheckpointerSettings {
  store: Store;
  signer: LogSigner;
  origin: string;
  clock: () => number;
  /** Sign once this many durable records are unsigned. */
  everyRecords: number;
  /** Sign at most this many ms after a record became durable. */
  everyMs: number;
  onError: (error: unknown) => void;
  /** The number of durable records, read when a checkpoint is signed. */
  durableSize: () => number;
}

const noop = (): void => {};

/** Keeps the frontier of the log and signs its checkpoints, one at a time. */
export class Checkpointer {
  readonly #settings: CheckpointerSettings;
  readonly #frontier: CompactRange;
  /** Leaf hashes of the records after the frontier, durable or not, in seq order. */
  #leaves: Uint8Array[] = [];
  #latest: CheckpointRow | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #requested = false;
  #signing = 0;
  /** performance.now() before which no signing is requested (after a failure). */
  #retryAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(settings: CheckpointerSettings, frontier: CompactRange, latest: CheckpointRow | undefined) {
    this.#settings = settings;
    this.#frontier = frontier;
    this.#latest = latest;
  }

  /** The latest checkpoint signed or resumed. */
  get latest(): CheckpointRow | undefined {
    return this.#latest;
  }

  /** Adds the leaf hash of the next record (seq = frontier size + pending leaves). */
  push(leaf: Uint8Array): void {
    this.#leaves.push(leaf);
  }

  /** Forgets the leaves of records from seq `size` on (their write failed). */
  truncate(size: number): void {
    this.#leaves.length = Math.max(0, size - this.#frontier.size);
  }

  /**
   * Called when records became durable: folds their leaves into the frontier, then signs now, or
   * arms the timer, as the cadence says.
   */
  committed(): void {
    this.#foldDurable();
    const unsigned = this.#settings.durableSize() - (this.#latest?.size ?? 0);
    if (unsigned <= 0 || this.#stopped) return;
    // After a failed signing, wait a period before trying again.
    if (unsigned >= this.#settings.everyRecords && performance.now() >= this.#retryAt) this.#request();
    else this.#armTimer();
  }

  /** Folds the leaves of every durable record not yet in the frontier (oldest first). */
  #foldDurable(): void {
    const fold = Math.min(this.#settings.durableSize() - this.#frontier.size, this.#leaves.length);
    if (fold <= 0) return;
    for (let i = 0; i < fold; i++) this.#frontier.append(this.#leaves[i] as Uint8Array);
    this.#leaves.splice(0, fold);
  }

  #armTimer(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#request();
    }, this.#settings.everyMs);
    this.#timer.unref();
  }

  #request(): void {
    // While one is being signed, wait: its completion looks at the cadence again.
    if (this.#requested || this.#stopped || this.#signing > 0) return;
    this.#requested = true;
    // After the appends that triggered it have been acknowledged.
    setImmediate(() => {
      this.#requested = false;
      this.#clearTimer();
      this.sign().then(noop, this.#settings.onError);
    });
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stops the cadence (timer and requests); `sign` still works. */
  stop(): void {
    this.#stopped = true;
    this.#clearTimer();
  }

  /**
   * Signs a checkpoint of the durable log unless the latest covers it, after any signing in
   * progress. Returns the latest checkpoint (undefined while the log is empty).
   * @throws the store's error when the checkpoint could not be stored.
   */
  sign(): Promise<CheckpointRow | undefined> {
    this.#signing += 1;
    const run = this.#chain
      .then(() => this.#sign())
      .then(
        (row) => {
          this.#signing -= 1;
          // Records acknowledged meanwhile may be due for the next one.
          this.committed();
          return row;
        },
        (error: unknown) => {
          this.#signing -= 1;
          this.#retryAt = performance.now() + this.#settings.everyMs;
          this.#armTimer();
          throw error;
        },
      );
    this.#chain = run.then(noop, noop);
    return run;
  }

  async #sign(): Promise<CheckpointRow | undefined> {
    const { store, signer, origin, clock } = this.#settings;
    const size = this.#settings.durableSize();
    if (size === 0 || (this.#latest !== undefined && this.#latest.size >= size)) return this.#latest;
    this.#foldDurable();
    if (this.#frontier.size !== size)
      throw new CallgateError(
        'internal',
        `the Merkle frontier covers ${this.#frontier.size} records, not the ${size} durable ones`,
      );
    const root = this.#frontier.root();
    const hashes = [...this.#frontier.hashes];
    const note = signCheckpoint({ origin, size, root }, signer);
    const row: CheckpointRow = { size, root, note, ts: clock() };
    await store.putCheckpoint(row);
    if (this.#latest === undefined || this.#latest.size < size) this.#latest = row;
    await saveFrontier(store, size, hashes);
    return row;
  }
}
