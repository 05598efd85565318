// Verifying many RFC 9162 inclusion proofs under one root in one pass. Proofs of neighbouring
// leaves share their upper levels, so each proof is checked only until it meets a node the last
// verified proof already authenticated (a node of its path, or the sibling it was combined with);
// above that, the rest of the proof must repeat the last one's hashes string for string. Every
// hash of every proof is still checked, and a proof is accepted only if verifying it alone
// (RFC 9162 §2.1.3.2) would accept it. On a run's records this costs about one node hash per
// record instead of log2(n), and allocates nothing per proof beyond the hashes it computes.
import { decodeHash, encodeBase64 } from '../base64.js';
import { HASH_SIZE, nodeHash } from '../merkle.js';

/** One proof to check: a leaf hash, its index, and the proof's base64 hashes (leaf side first). */
export interface InclusionItem {
  leaf: Uint8Array;
  index: number;
  hashes: readonly string[];
}

const LEVELS = 64;

/**
 * A path, by level: at each level where a hash was consumed, the path node's position and value
 * and the sibling hash (base64 as in the proof, and its bytes) it was combined with.
 */
class Path {
  readonly present: boolean[] = new Array(LEVELS).fill(false);
  readonly position: number[] = new Array(LEVELS).fill(0);
  readonly node: Uint8Array[] = new Array(LEVELS);
  readonly sibling: string[] = new Array(LEVELS).fill('');
  readonly siblingBytes: Uint8Array[] = new Array(LEVELS);
  /** The base64 of `node`, computed when first needed. */
  readonly nodeText: Array<string | undefined> = new Array(LEVELS);
  top = 0;

  set(level: number, position: number, node: Uint8Array, sibling: string, siblingBytes: Uint8Array): void {
    this.present[level] = true;
    this.position[level] = position;
    this.node[level] = node;
    this.sibling[level] = sibling;
    this.siblingBytes[level] = siblingBytes;
    this.nodeText[level] = undefined;
  }

  copy(level: number, from: Path): void {
    this.set(
      level,
      from.position[level] as number,
      from.node[level] as Uint8Array,
      from.sibling[level] as string,
      from.siblingBytes[level] as Uint8Array,
    );
  }

  nodeBase64(level: number): string {
    const cached = this.nodeText[level];
    if (cached !== undefined) return cached;
    const text = encodeBase64(this.node[level] as Uint8Array);
    this.nodeText[level] = text;
    return text;
  }

  clearBelow(level: number): void {
    for (let l = 0; l < level; l++) this.present[l] = false;
  }

  /** True when `hashes[from..]` are this path's siblings from `level` up, and no more. */
  tailIs(hashes: readonly string[], from: number, level: number): boolean {
    let at = from;
    for (let l = level; l < this.top; l++) {
      if (!this.present[l]) continue;
      if (hashes[at] !== this.sibling[l]) return false;
      at += 1;
    }
    return at === hashes.length;
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Checks many proofs under one tree, remembering the path of the last one that held. */
class InclusionChecker {
  readonly #known = new Path();
  readonly #scratch = new Path();
  #hasKnown = false;
  readonly #steps: number[] = [];

  constructor(
    readonly size: number,
    readonly root: Uint8Array,
  ) {}

  /**
   * Takes the steps of the proof in progress (below `level`) into the known path, then its node
   * at `level`, combined with `sibling` (whose bytes are `siblingBytes`).
   */
  #adopt(level: number, position: number, node: Uint8Array, sibling: string, siblingBytes: Uint8Array): void {
    const known = this.#known;
    known.clearBelow(level);
    for (const l of this.#steps) known.copy(l, this.#scratch);
    known.set(level, position, node, sibling, siblingBytes);
  }

  check(item: InclusionItem): boolean {
    const { leaf, index, hashes } = item;
    const size = this.size;
    if (!Number.isSafeInteger(index) || index < 0 || index >= size || leaf.length !== HASH_SIZE) return false;
    const known = this.#known;
    const scratch = this.#scratch;
    const steps = this.#steps;
    steps.length = 0;
    let meet = this.#hasKnown;
    let fn = index;
    let sn = size - 1;
    let level = 0;
    let value: Uint8Array = leaf;
    for (let t = 0; t < hashes.length; t++) {
      if (sn === 0 || level >= LEVELS) return false;
      // A right-edge node without a right sibling moves up until it is a right child (the shifts
      // of RFC 9162 §2.1.3.2 step 5.b.2, done before hashing rather than after: same result).
      if (fn === sn) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
          level += 1;
        }
      }
      const hash = hashes[t] as string;
      if (meet && known.present[level]) {
        const position = known.position[level] as number;
        const node = known.node[level] as Uint8Array;
        if (position === fn) {
          // The same node as the known path: same value, same hashes above.
          if (equalBytes(value, node) && known.tailIs(hashes, t, level)) {
            this.#adopt(level, fn, value, hash, known.siblingBytes[level] as Uint8Array);
            return true;
          }
          meet = false;
        } else if (position === (fn % 2 === 0 ? fn + 1 : fn - 1)) {
          // The sibling the known path was combined with: it named our value, we must name its
          // node, and above the common parent the paths are one.
          if (
            equalBytes(known.siblingBytes[level] as Uint8Array, value) &&
            hash === known.nodeBase64(level) &&
            known.tailIs(hashes, t + 1, level + 1)
          ) {
            this.#adopt(level, fn, value, hash, node);
            return true;
          }
          meet = false;
        }
      }
      const sibling = decodeHash(hash);
      if (sibling === undefined) return false;
      scratch.set(level, fn, value, hash, sibling);
      steps.push(level);
      value = fn % 2 === 1 ? nodeHash(sibling, value) : nodeHash(value, sibling);
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
      level += 1;
    }
    if (sn !== 0 || !equalBytes(value, this.root)) return false;
    // Verified in full: its path becomes the known one.
    known.clearBelow(Math.max(known.top, level));
    for (const l of steps) known.copy(l, scratch);
    known.top = level;
    this.#hasKnown = true;
    return true;
  }
}

/**
 * Checks the inclusion proof of every item under one tree of `size` leaves with 32-byte `root`
 * (RFC 9162 §2.1.3.2), sharing work between proofs. Items are best given in leaf order.
 * Proof hashes must be canonical base64 of 32 bytes.
 * @returns per item, whether its proof holds. Never throws.
 */
export function verifyInclusions(items: readonly InclusionItem[], size: number, root: Uint8Array): boolean[] {
  const checker = new InclusionChecker(size, root);
  return items.map((item) => checker.check(item));
}
