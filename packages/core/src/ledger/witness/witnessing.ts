// The log's side of c2sp.org/tlog-witness: each new checkpoint goes to every configured witness
// with a consistency proof from the size that witness last cosigned; the cosignature lines that
// verify are added to the stored note, so exports carry them. A witness that cannot be reached,
// or refuses, is reported (`gaps`, and the logger) — never skipped silently.

import { CallgateError } from '@callgate/protocol';
import type { Logger } from '../../gate/logger.js';
import type { Store } from '../../store/store.js';
import { MerkleTree } from '../proofs.js';
import {
  addCosignatures,
  noteCosignatures,
  parseWitnessKey,
  repeatedWitness,
  type WitnessKey,
} from './cosignature.js';
import { addCheckpointBody } from './witness.js';

/** One configured witness: its submission prefix and vkey. */
export interface WitnessEndpoint {
  url: string;
  key: string;
}

/** A witness that did not cosign the latest checkpoint: since when (epoch ms) and why. */
export interface WitnessGap {
  witness: string;
  size: number;
  since: number;
  reason: string;
}

/** Options of {@link Witnessing}. */
export interface WitnessingOptions {
  store: Store;
  witnesses: readonly WitnessEndpoint[];
  /** How many must cosign for a checkpoint to count as witnessed. Default: all. */
  quorum?: number;
  fetch?: typeof fetch;
  logger?: Logger;
  /** Per request, ms. Default 5000. */
  timeoutMs?: number;
  /**
   * Told when a witness starts failing (`opened`) and when it cosigns again (`closed`, with the
   * gap's end): where the log records the gap. Errors it throws are logged.
   */
  onGap?: (gap: WitnessGap, phase: 'opened' | 'closed', now: number) => Promise<void> | void;
}

interface Target {
  endpoint: WitnessEndpoint;
  key: WitnessKey;
  /** The size this witness last cosigned (0 before it answered). */
  size: number;
}

/** Submits checkpoints to witnesses and keeps their cosignatures with the checkpoints. */
export class Witnessing {
  readonly #store: Store;
  readonly #targets: Target[];
  readonly #quorum: number;
  readonly #fetch: typeof fetch;
  readonly #logger: Logger | undefined;
  readonly #timeoutMs: number;
  readonly #onGap: WitnessingOptions['onGap'];
  readonly #gaps = new Map<string, WitnessGap>();
  #witnessedSize = 0;
  #queue: Promise<unknown> = Promise.resolve();

  /** @throws CallgateError `request-invalid` for a bad witness key or quorum. */
  constructor(options: WitnessingOptions) {
    this.#store = options.store;
    this.#targets = options.witnesses.map((endpoint) => ({
      endpoint,
      key: parseWitnessKey(endpoint.key),
      size: 0,
    }));
    const repeated = repeatedWitness(this.#targets.map((target) => target.key));
    if (repeated !== undefined) {
      const [first, second] = repeated.map((index) => options.witnesses[index]?.key);
      throw new CallgateError(
        'request-invalid',
        `witness key ${second} is the same witness as ${first}: a quorum counts distinct witnesses`,
      );
    }
    this.#quorum = options.quorum ?? this.#targets.length;
    if (!(this.#quorum >= 1 && this.#quorum <= this.#targets.length)) {
      throw new RangeError(`witness quorum must be 1 to ${this.#targets.length}, got ${this.#quorum}`);
    }
    this.#fetch = options.fetch ?? fetch;
    this.#logger = options.logger;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#onGap = options.onGap;
  }

  #tell(gap: WitnessGap, phase: 'opened' | 'closed'): void {
    if (!this.#onGap) return;
    Promise.resolve()
      .then(() => this.#onGap?.(gap, phase, Date.now()))
      .catch((error: unknown) =>
        this.#logger?.warn(
          { witness: gap.witness, error: (error as Error).message },
          'could not record a witness gap',
        ),
      );
  }

  /** Witnesses that did not cosign the latest checkpoint submitted, with why. */
  get gaps(): WitnessGap[] {
    return [...this.#gaps.values()];
  }

  /** The size of the newest checkpoint cosigned by a quorum. */
  get witnessedSize(): number {
    return this.#witnessedSize;
  }

  /**
   * Submits the store's latest checkpoint to each witness that has not cosigned it, and stores the
   * note with every valid cosignature. Resolves with the number of valid cosignatures it has.
   */
  submitLatest(): Promise<number> {
    // One submission at a time: a witness must see checkpoints in order.
    const next = this.#queue.then(() => this.#submitLatest());
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #submitLatest(): Promise<number> {
    const latest = await this.#store.latestCheckpoint();
    if (!latest || latest.size === 0) return 0;
    let note = latest.note;
    const pending = this.#targets.filter((target) => noteCosignatures(note, [target.key]).length === 0);
    let tree: MerkleTree | undefined;
    const proof = async (from: number) => {
      if (from === 0 || from === latest.size) return [];
      tree ??= new MerkleTree(await this.#store.readLeafHashes(0, latest.size));
      return tree.consistencyProof(from, latest.size);
    };
    const answers = await Promise.all(
      pending.map((target) => this.#submit(target, latest.size, latest.note, proof)),
    );
    for (const lines of answers) if (lines) note = addCosignatures(note, lines);
    if (note !== latest.note) await this.#store.updateCheckpointNote?.(latest.size, note);
    const count = noteCosignatures(
      note,
      this.#targets.map((target) => target.key),
    ).length;
    if (count >= this.#quorum) this.#witnessedSize = latest.size;
    return count;
  }

  async #submit(
    target: Target,
    size: number,
    note: string,
    proof: (from: number) => Promise<Uint8Array[]>,
  ): Promise<string | undefined> {
    const name = target.key.name;
    const gap = (reason: string) => {
      const known = this.#gaps.get(name);
      const opened = { witness: name, size, since: known?.since ?? Date.now(), reason };
      this.#gaps.set(name, opened);
      if (!known) this.#tell(opened, 'opened');
      this.#logger?.warn({ witness: name, size, reason }, 'a witness did not cosign the checkpoint');
      return undefined;
    };
    for (let attempt = 0; attempt < 2; attempt += 1) {
      let response: Response;
      try {
        response = await this.#fetch(`${target.endpoint.url.replace(/\/$/, '')}/add-checkpoint`, {
          method: 'POST',
          body: addCheckpointBody(target.size, await proof(target.size), note),
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (error) {
        return gap(`unreachable: ${(error as Error).message}`);
      }
      const text = await response.text();
      if (response.status === 409 && attempt === 0) {
        const known = Number(text.trim());
        if (Number.isSafeInteger(known) && known >= 0 && known <= size) {
          target.size = known;
          continue;
        }
      }
      if (response.status !== 200) return gap(`answered ${response.status}: ${text.trim().slice(0, 200)}`);
      if (noteCosignatures(note + text, [target.key]).length === 0)
        return gap('its answer holds no valid cosignature');
      target.size = size;
      const closed = this.#gaps.get(name);
      if (closed) {
        this.#gaps.delete(name);
        this.#tell(closed, 'closed');
      }
      return text;
    }
    return gap('the witness kept another size');
  }
}
