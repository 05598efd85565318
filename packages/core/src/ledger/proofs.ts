// Building RFC 9162 inclusion and consistency proofs from perfect subtree hashes: either a whole
// tree in memory (MerkleTree) or only the subtrees some proofs need, gathered while streaming the
// leaves once (SubtreeCollector), which is how a ledger export proves a run inside a large log.
import { encodeBase64 } from './base64.js';
import {
  CompactRange,
  consistencyRanges,
  emptyRoot,
  inclusionRanges,
  type LeafRange,
  nodeHash,
  perfectSubtrees,
  rangeHash,
  type SubtreeSource,
} from './merkle.js';

/** PATH(index, D[size]) of RFC 9162 §2.1.3.1 from `source`. 32-byte hashes, leaf side first. */
export function inclusionProofFrom(source: SubtreeSource, index: number, size: number): Uint8Array[] {
  return inclusionRanges(index, size).map(([start, end]) => rangeHash(source, start, end));
}

/**
 * The base64 hash of a proof range, remembered: proofs of neighbouring leaves share most of their
 * ranges (and right-edge ranges take several node hashes each).
 */
export function encodedRanges(source: SubtreeSource): (start: number, end: number) => string {
  const perfect = new Map<number, string>();
  const folded = new Map<string, string>();
  return (start, end) => {
    const length = end - start;
    const isPerfect = length <= 0x40000000 && (length & (length - 1)) === 0;
    // A perfect range's key: start·64 + level (exact below 2^47 leaves).
    const key = isPerfect ? start * 64 + (31 - Math.clz32(length)) : `${start}:${end}`;
    const memo = (isPerfect ? perfect : folded) as Map<number | string, string>;
    let text = memo.get(key);
    if (text === undefined) {
      text = encodeBase64(rangeHash(source, start, end));
      memo.set(key, text);
    }
    return text;
  };
}

/** PROOF(fromSize, D[toSize]) of RFC 9162 §2.1.4.1 from `source`. 32-byte hashes. */
export function consistencyProofFrom(source: SubtreeSource, fromSize: number, toSize: number): Uint8Array[] {
  return consistencyRanges(fromSize, toSize).map(([start, end]) => rangeHash(source, start, end));
}

/** RFC 9162 MTH of the first `size` leaves from `source` (the empty root when `size` is 0). */
export function rootFrom(source: SubtreeSource, size: number): Uint8Array {
  return size === 0 ? emptyRoot() : rangeHash(source, 0, size);
}

/**
 * A whole tree in memory: every perfect subtree hash, 2n hashes for n leaves. For tests and
 * small logs; exports of a large log use {@link SubtreeCollector}.
 */
export class MerkleTree {
  readonly #levels: Uint8Array[][];

  /** @param leafHashes 32-byte RFC 9162 leaf hashes, in leaf order. */
  constructor(leafHashes: readonly Uint8Array[]) {
    const levels: Uint8Array[][] = [[...leafHashes]];
    let below = levels[0] as Uint8Array[];
    while (below.length > 1) {
      const above: Uint8Array[] = [];
      for (let i = 0; i + 1 < below.length; i += 2)
        above.push(nodeHash(below[i] as Uint8Array, below[i + 1] as Uint8Array));
      levels.push(above);
      below = above;
    }
    this.#levels = levels;
  }

  /** How many leaves the tree holds. */
  get size(): number {
    return this.#levels[0]?.length ?? 0;
  }

  /** The hash of the perfect subtree (level, index), if the tree has it. */
  readonly subtree: SubtreeSource = (level, index) => this.#levels[level]?.[index];

  /** MTH of the first `size` leaves (default all). */
  root(size = this.size): Uint8Array {
    return rootFrom(this.subtree, size);
  }

  /** Inclusion proof of leaf `index` in the tree of the first `size` leaves (default all). */
  inclusionProof(index: number, size = this.size): Uint8Array[] {
    return inclusionProofFrom(this.subtree, index, size);
  }

  /** Consistency proof from `fromSize` to `toSize` leaves (default all). */
  consistencyProof(fromSize: number, toSize = this.size): Uint8Array[] {
    return consistencyProofFrom(this.subtree, fromSize, toSize);
  }
}

// A perfect subtree's key: index·64 + level, exact for indexes below 2^47.
const keyOf = (level: number, index: number): number => index * 64 + level;

/**
 * Gathers just the perfect subtree hashes that some proofs need while the leaves stream past
 * once. Memory is O(needed hashes + log n); time is one pass over the leaves (n node hashes).
 *
 * Usage: `need*` every proof, then `append` every leaf hash of [0, size) in order, then build
 * proofs with {@link inclusionProofFrom} / {@link consistencyProofFrom} over `source`.
 */
export class SubtreeCollector {
  readonly #needed = new Set<number>();
  readonly #found = new Map<number, Uint8Array>();
  readonly #range = new CompactRange();
  readonly #onNode = (level: number, index: number, hash: Uint8Array): void => {
    const key = keyOf(level, index);
    if (this.#needed.has(key)) this.#found.set(key, hash);
  };

  /** Notes the subtrees of one proof range. */
  needRange([start, end]: LeafRange): void {
    for (const [level, index] of perfectSubtrees(start, end)) this.#needed.add(keyOf(level, index));
  }

  /** Notes the subtrees of the inclusion proof of leaf `index` in the tree of `size` leaves. */
  needInclusion(index: number, size: number): void {
    for (const range of inclusionRanges(index, size)) this.needRange(range);
  }

  /** Notes the subtrees of the consistency proof from `fromSize` to `toSize`, and both roots. */
  needConsistency(fromSize: number, toSize: number): void {
    for (const range of consistencyRanges(fromSize, toSize)) this.needRange(range);
    this.needRange([0, fromSize]);
    this.needRange([0, toSize]);
  }

  /** Notes the subtrees of the root of the first `size` leaves. */
  needRoot(size: number): void {
    if (size > 0) this.needRange([0, size]);
  }

  /** Feeds the next leaf hash (leaf number `size`). */
  append(leaf: Uint8Array): void {
    this.#range.append(leaf, this.#onNode);
  }

  /** How many leaves have been fed. */
  get size(): number {
    return this.#range.size;
  }

  /** The gathered subtree hashes. */
  readonly source: SubtreeSource = (level, index) => this.#found.get(keyOf(level, index));
}
