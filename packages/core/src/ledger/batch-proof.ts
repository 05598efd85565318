// One inclusion proof for many leaves (`callgate-bundle/2`'s `inclusion`): the hashes of the
// subtrees that hold none of the proven leaves, met walking the RFC 9162 tree left to right.
// The verifier recomputes the root from the proven leaves and these hashes: one node hash per
// tree node visited, about 2 per proven leaf plus 2·log2(n) per run of consecutive leaves.
import { decodeHash } from './base64.js';
import { HASH_SIZE, type LeafRange, nodeHash, splitPoint } from './merkle.js';

/**
 * The subtrees (leaf ranges) whose hashes prove `indices` in the tree of `size` leaves, in the
 * order the proof lists them (see `batchInclusionSchema` in @callgate/protocol).
 *
 * @param indices the proven leaves, strictly increasing, each below `size`.
 * @throws RangeError when `indices` are not strictly increasing or not below `size`.
 */
export function batchProofRanges(indices: readonly number[], size: number): LeafRange[] {
  for (let i = 0; i < indices.length; i++) {
    const index = indices[i] as number;
    if (
      !Number.isSafeInteger(index) ||
      index < 0 ||
      index >= size ||
      (i > 0 && index <= (indices[i - 1] as number))
    )
      throw new RangeError(`batch proof: leaf ${index} at ${i} is not strictly increasing below ${size}`);
  }
  const ranges: LeafRange[] = [];
  let next = 0;
  const walk = (start: number, end: number): void => {
    if (next >= indices.length || (indices[next] as number) >= end) {
      ranges.push([start, end]);
      return;
    }
    if (end - start === 1) {
      next += 1;
      return;
    }
    const middle = start + splitPoint(end - start);
    walk(start, middle);
    walk(middle, end);
  };
  if (size > 0) walk(0, size);
  return ranges;
}

/**
 * The RFC 9162 root of a tree of `size` leaves from the leaves it proves and a batch proof, or
 * undefined when they do not make a root: `indices` not strictly increasing below `size`, a
 * hash that is not canonical base64 of 32 bytes, too few hashes, or hashes left over. Compare
 * the result with the checkpoint's root. Never throws.
 *
 * @param leaves the 32-byte leaf hashes; leaf `i` of the proof is `leaves[32·slot(i) ..]`, with
 *   `slot(i)` from `slots` (default `i`): the bundle's position of the record proven.
 */
export function rootFromBatchProof(
  indices: readonly number[],
  leaves: Uint8Array,
  size: number,
  hashes: readonly string[],
  slots?: readonly number[],
): Uint8Array | undefined {
  if (size === 0 || indices.length === 0) return undefined;
  for (let i = 0; i < indices.length; i++) {
    const index = indices[i] as number;
    if (
      !Number.isSafeInteger(index) ||
      index < 0 ||
      index >= size ||
      (i > 0 && index <= (indices[i - 1] as number))
    )
      return undefined;
  }
  let next = 0;
  let used = 0;
  let failed = false;
  const walk = (start: number, end: number): Uint8Array => {
    if (failed) return EMPTY;
    if (next >= indices.length || (indices[next] as number) >= end) {
      const hash = used < hashes.length ? decodeHash(hashes[used] as string) : undefined;
      used += 1;
      if (hash === undefined) failed = true;
      return hash ?? EMPTY;
    }
    if (end - start === 1) {
      const slot = slots ? (slots[next] as number) : next;
      next += 1;
      return leaves.subarray(slot * HASH_SIZE, (slot + 1) * HASH_SIZE);
    }
    const middle = start + splitPoint(end - start);
    const left = walk(start, middle);
    const right = walk(middle, end);
    return failed ? EMPTY : nodeHash(left, right);
  };
  const root = walk(0, size);
  if (failed || used !== hashes.length) return undefined;
  return root;
}

const EMPTY = new Uint8Array(0);
