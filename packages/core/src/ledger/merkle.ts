// Merkle tree hashing, proofs and proof verification of RFC 9162 (Certificate Transparency 2.0)
// §2.1. Hashes are 32-byte SHA-256 values; a leaf's input is the record's canonical bytes.
import { sha256 } from '../crypto.js';

/** Size in bytes of every hash in the tree (SHA-256). */
export const HASH_SIZE = 32;

/** RFC 9162 §2.1.1 leaf hash: SHA-256(0x00 ‖ data). Strings are hashed as UTF-8. Returns 32 bytes. */
export function leafHash(data: string | Uint8Array): Buffer {
  // One buffer, one one-shot hash: cheaper than a streaming hash of two parts.
  const length = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.length;
  const input = Buffer.allocUnsafe(length + 1);
  input[0] = 0x00;
  if (typeof data === 'string') input.write(data, 1, 'utf8');
  else input.set(data, 1);
  return sha256(input);
}

/** The input of a node hash of two 32-byte children, reused: sha256 copies the digest out. */
const NODE_INPUT = Buffer.alloc(1 + 2 * HASH_SIZE);

/** RFC 9162 §2.1.1 interior node hash: SHA-256(0x01 ‖ left ‖ right). Returns 32 bytes. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  const input =
    left.length === HASH_SIZE && right.length === HASH_SIZE
      ? NODE_INPUT
      : Buffer.allocUnsafe(1 + left.length + right.length);
  input[0] = 0x01;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return sha256(input);
}

/** RFC 9162 §2.1.1 root of the empty tree: SHA-256 of no bytes. */
export function emptyRoot(): Buffer {
  return sha256();
}

/** The largest power of two strictly below `n` (`n` ≥ 2): the split point `k` of RFC 9162 §2.1.1. */
export function splitPoint(n: number): number {
  if (n < 2) throw new RangeError(`a tree of ${n} leaves has no split point`);
  if (n - 1 <= 0xffffffff) return 0x80000000 >>> Math.clz32(n - 1);
  let k = 2 ** 32;
  while (k * 2 < n) k *= 2;
  return k;
}

/** True when `n` is a power of two (1, 2, 4, ...). */
function isPowerOfTwo(n: number): boolean {
  if (n >= 1 && n <= 0x40000000) return (n & (n - 1)) === 0;
  return n >= 1 && splitPoint(n + 1) === n;
}

/**
 * The frontier of a tree under construction (a "compact range" [0, size)): the roots of the
 * perfect subtrees that make up its leaves, largest (leftmost) first, one per set bit of `size`.
 * Appending a leaf costs O(log n) node hashes at worst and one on average; the root costs
 * O(log n). Rebuild one from stored leaf hashes, or restore one from `hashes`.
 */
export class CompactRange {
  #size: number;
  readonly #hashes: Uint8Array[];

  /**
   * @param size how many leaves the range covers (default 0).
   * @param hashes the perfect subtree roots for `size` (see {@link CompactRange.hashes}).
   * @throws RangeError when `hashes` does not hold one 32-byte hash per set bit of `size`.
   */
  constructor(size = 0, hashes: readonly Uint8Array[] = []) {
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`invalid tree size ${size}`);
    if (hashes.length !== bitCount(size))
      throw new RangeError(
        `a range of ${size} leaves has ${bitCount(size)} subtree roots, got ${hashes.length}`,
      );
    for (const hash of hashes)
      if (hash.length !== HASH_SIZE) throw new RangeError(`a subtree root is ${HASH_SIZE} bytes`);
    this.#size = size;
    this.#hashes = [...hashes];
  }

  /** How many leaves the range covers. */
  get size(): number {
    return this.#size;
  }

  /** The perfect subtree roots, leftmost (largest) first. */
  get hashes(): readonly Uint8Array[] {
    return this.#hashes;
  }

  /**
   * Appends the leaf hash of leaf `size` and merges completed subtrees. `onNode` (if given) sees
   * every subtree completed on the way: the leaf itself at level 0, then each merged node, as
   * (level, index, hash) where the subtree covers leaves [index·2^level, (index+1)·2^level).
   */
  append(leaf: Uint8Array, onNode?: (level: number, index: number, hash: Uint8Array) => void): void {
    let index = this.#size;
    let hash = leaf;
    let level = 0;
    onNode?.(0, index, hash);
    // Each trailing 1 bit of the old size is a subtree of the same height waiting on the left.
    while (index % 2 === 1) {
      const left = this.#hashes.pop() as Uint8Array;
      hash = nodeHash(left, hash);
      index = (index - 1) / 2;
      level += 1;
      onNode?.(level, index, hash);
    }
    this.#hashes.push(hash);
    this.#size += 1;
  }

  /** RFC 9162 MTH of the leaves so far (the empty root for 0 leaves). 32 bytes. */
  root(): Buffer {
    const count = this.#hashes.length;
    if (count === 0) return emptyRoot();
    let hash = this.#hashes[count - 1] as Uint8Array;
    for (let i = count - 2; i >= 0; i--) hash = nodeHash(this.#hashes[i] as Uint8Array, hash);
    return Buffer.from(hash);
  }

  /** An independent copy. */
  clone(): CompactRange {
    return new CompactRange(this.#size, this.#hashes);
  }
}

function bitCount(n: number): number {
  let count = 0;
  let rest = n;
  while (rest > 0) {
    count += rest % 2;
    rest = Math.floor(rest / 2);
  }
  return count;
}

/** RFC 9162 MTH of a list of leaf hashes (32 bytes each). Returns the 32-byte root. */
export function merkleRoot(leafHashes: readonly Uint8Array[]): Buffer {
  const range = new CompactRange();
  for (const leaf of leafHashes) range.append(leaf);
  return range.root();
}

/** A range of leaves [start, end) whose RFC 9162 MTH is one element of a proof. */
export type LeafRange = readonly [start: number, end: number];

/**
 * The ranges whose MTH form PATH(index, D[size]) (RFC 9162 §2.1.3.1), leaf side first.
 * @throws RangeError when `index` is not below `size`.
 */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const ranges: LeafRange[] = [];
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index < start + k) {
      ranges.push([start + k, end]);
      end = start + k;
    } else {
      ranges.push([start, start + k]);
      start += k;
    }
  }
  return ranges.reverse();
}

/**
 * The ranges whose MTH form PROOF(fromSize, D[toSize]) (RFC 9162 §2.1.4.1), leaf side first.
 * Empty when the sizes are equal.
 * @throws RangeError unless 1 ≤ fromSize ≤ toSize.
 */
export function consistencyRanges(fromSize: number, toSize: number): LeafRange[] {
  if (!(fromSize >= 1 && fromSize <= toSize))
    throw new RangeError(`no consistency proof from size ${fromSize} to size ${toSize}`);
  const ranges: LeafRange[] = [];
  let m = fromSize;
  let start = 0;
  let end = toSize;
  let complete = true;
  for (;;) {
    const n = end - start;
    if (m === n) {
      if (!complete) ranges.push([start, end]);
      break;
    }
    const k = splitPoint(n);
    if (m <= k) {
      ranges.push([start + k, end]);
      end = start + k;
    } else {
      ranges.push([start, start + k]);
      m -= k;
      start += k;
      complete = false;
    }
  }
  return ranges.reverse();
}

/**
 * The perfect subtrees making up a proof range [start, end), left to right, as [level, index]
 * (leaves [index·2^level, (index+1)·2^level)). The range's MTH is their right fold:
 * node(s0, node(s1, ... sN)). Proof ranges start at a multiple of a power of two at least
 * their length, which makes every piece aligned.
 */
export function perfectSubtrees(start: number, end: number): Array<readonly [level: number, index: number]> {
  const pieces: Array<readonly [number, number]> = [];
  let at = start;
  while (at < end) {
    const length = end - at;
    const size = isPowerOfTwo(length) ? length : splitPoint(length);
    const level = size <= 0x40000000 ? 31 - Math.clz32(size) : Math.round(Math.log2(size));
    pieces.push([level, at / size]);
    at += size;
  }
  return pieces;
}

/** Where proofs get the hash of a perfect subtree (level, index); undefined when unknown. */
export type SubtreeSource = (level: number, index: number) => Uint8Array | undefined;

/**
 * MTH of the proof range [start, end) from perfect subtree hashes.
 * @throws RangeError when `source` lacks a subtree hash.
 */
export function rangeHash(source: SubtreeSource, start: number, end: number): Uint8Array {
  const pieces = perfectSubtrees(start, end);
  let hash: Uint8Array | undefined;
  for (let i = pieces.length - 1; i >= 0; i--) {
    const [level, index] = pieces[i] as readonly [number, number];
    const piece = source(level, index);
    if (piece === undefined) throw new RangeError(`missing subtree hash at level ${level}, index ${index}`);
    hash = hash === undefined ? piece : nodeHash(piece, hash);
  }
  if (hash === undefined) throw new RangeError(`empty range [${start}, ${end})`);
  return hash;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/**
 * Verifies an inclusion proof by the algorithm of RFC 9162 §2.1.3.2.
 *
 * @param leaf the 32-byte leaf hash (see {@link leafHash}).
 * @param index the leaf's 0-based index.
 * @param size the tree size the proof is for.
 * @param proof the proof's node hashes, leaf side first.
 * @param root the 32-byte root of the tree of `size` leaves.
 * @returns true when the proof shows the leaf at `index` in that tree; never throws.
 */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  return rootFromInclusionProof(leaf, index, size, proof)?.equals(root) ?? false;
}

/**
 * The root that an inclusion proof leads to (RFC 9162 §2.1.3.2 steps 1–5), or undefined when the
 * proof is malformed for `index` and `size` (wrong length, index out of range, hash sizes).
 */
export function rootFromInclusionProof(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
): Buffer | undefined {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size)
    return undefined;
  if (leaf.length !== HASH_SIZE) return undefined;
  let fn = index;
  let sn = size - 1;
  let hash: Uint8Array = leaf;
  for (const sibling of proof) {
    if (sn === 0 || sibling.length !== HASH_SIZE) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      hash = nodeHash(sibling, hash);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      hash = nodeHash(hash, sibling);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return undefined;
  return Buffer.from(hash);
}

/**
 * Verifies a consistency proof by the algorithm of RFC 9162 §2.1.4.2: the tree of `toSize`
 * leaves with root `toRoot` extends the tree of `fromSize` leaves with root `fromRoot`.
 * Equal sizes need an empty proof and equal roots. Returns a boolean; never throws.
 */
export function verifyConsistency(
  fromSize: number,
  toSize: number,
  proof: readonly Uint8Array[],
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(fromSize) || !Number.isSafeInteger(toSize)) return false;
  if (fromSize < 1 || fromSize > toSize) return false;
  if (fromRoot.length !== HASH_SIZE || toRoot.length !== HASH_SIZE) return false;
  if (proof.some((hash) => hash.length !== HASH_SIZE)) return false;
  if (fromSize === toSize) return proof.length === 0 && equalBytes(fromRoot, toRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(fromSize) ? [fromRoot, ...proof] : [...proof];
  let fn = fromSize - 1;
  let sn = toSize - 1;
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2;
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (let i = 1; i < path.length; i++) {
    const hash = path[i] as Uint8Array;
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(hash, fr);
      sr = nodeHash(hash, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, hash);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(fr, fromRoot) && equalBytes(sr, toRoot);
}
