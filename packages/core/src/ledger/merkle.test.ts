import { describe, expect, it } from 'vitest';
import { sha256 } from '../crypto.js';
import {
  CompactRange,
  consistencyRanges,
  emptyRoot,
  inclusionRanges,
  leafHash,
  merkleRoot,
  nodeHash,
  rootFromInclusionProof,
  splitPoint,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js';
import { consistencyProofFrom, inclusionProofFrom, MerkleTree, SubtreeCollector } from './proofs.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const unhex = (text: string): Buffer => Buffer.from(text, 'hex');

// The RFC 6962 / RFC 9162 reference vectors (Certificate Transparency, transparency-dev/merkle).
const REFERENCE_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map(unhex);
const REFERENCE_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

// The definitions of RFC 9162 §2.1, written as directly as possible to check the fast code.
function referenceRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return leaves[0] as Uint8Array;
  const k = splitPoint(leaves.length);
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}
function referencePath(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length === 1) return [];
  const k = splitPoint(leaves.length);
  return m < k
    ? [...referencePath(m, leaves.slice(0, k)), referenceRoot(leaves.slice(k))]
    : [...referencePath(m - k, leaves.slice(k)), referenceRoot(leaves.slice(0, k))];
}
function referenceSubproof(m: number, leaves: Uint8Array[], complete: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [referenceRoot(leaves)];
  const k = splitPoint(n);
  return m <= k
    ? [...referenceSubproof(m, leaves.slice(0, k), complete), referenceRoot(leaves.slice(k))]
    : [...referenceSubproof(m - k, leaves.slice(k), false), referenceRoot(leaves.slice(0, k))];
}

const LEAVES = Array.from({ length: 40 }, (_, i) => leafHash(`leaf ${i}`));
const flip = (bytes: Uint8Array, at = 0): Buffer => {
  const copy = Buffer.from(bytes);
  copy[at % copy.length] = (copy[at % copy.length] as number) ^ 1;
  return copy;
};

describe('RFC 9162 hashing', () => {
  it('gives the reference roots for sizes 0..8 and SHA-256("") for the empty tree', () => {
    const leaves = REFERENCE_LEAVES.map((data) => leafHash(data));
    expect(hex(emptyRoot())).toBe(REFERENCE_ROOTS[0]);
    for (let size = 0; size <= leaves.length; size++) {
      expect(hex(merkleRoot(leaves.slice(0, size))), `size ${size}`).toBe(REFERENCE_ROOTS[size]);
      expect(hex(new MerkleTree(leaves).root(size)), `tree size ${size}`).toBe(REFERENCE_ROOTS[size]);
    }
  });

  it('gives the reference inclusion and consistency proofs', () => {
    const tree = new MerkleTree(REFERENCE_LEAVES.map((data) => leafHash(data)));
    expect(tree.inclusionProof(0, 8).map(hex)).toEqual([
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
    expect(tree.inclusionProof(5, 8).map(hex)).toEqual([
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
    expect(tree.consistencyProof(2, 8).map(hex)).toEqual([
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
    expect(tree.consistencyProof(6, 8).map(hex)).toEqual([
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
    expect(tree.consistencyProof(2, 5).map(hex)).toEqual([
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ]);
  });

  it('splits at the largest power of two below n, also beyond 2^32', () => {
    expect([2, 3, 4, 5, 8, 9, 1000].map(splitPoint)).toEqual([1, 2, 2, 4, 4, 8, 512]);
    expect(splitPoint(2 ** 40)).toBe(2 ** 39);
    expect(splitPoint(2 ** 40 + 1)).toBe(2 ** 40);
    expect(() => splitPoint(1)).toThrow(RangeError);
  });
});

describe('CompactRange', () => {
  it('has the reference root after every append, and restores from its hashes', () => {
    const range = new CompactRange();
    for (let size = 1; size <= LEAVES.length; size++) {
      range.append(LEAVES[size - 1] as Uint8Array);
      expect(range.size).toBe(size);
      expect(hex(range.root())).toBe(hex(referenceRoot(LEAVES.slice(0, size))));
      expect(hex(new CompactRange(range.size, range.hashes).root())).toBe(hex(range.root()));
    }
  });

  it('refuses hashes that do not match the size', () => {
    expect(() => new CompactRange(3, [LEAVES[0] as Uint8Array])).toThrow(/2 subtree roots/);
    expect(() => new CompactRange(-1)).toThrow(RangeError);
  });

  it('clones independently', () => {
    const range = new CompactRange();
    range.append(LEAVES[0] as Uint8Array);
    const copy = range.clone();
    copy.append(LEAVES[1] as Uint8Array);
    expect(range.size).toBe(1);
    expect(copy.size).toBe(2);
  });
});

describe('inclusion proofs', () => {
  it('match the RFC definition and verify for every index of trees of size 1..40', () => {
    const tree = new MerkleTree(LEAVES);
    for (let size = 1; size <= LEAVES.length; size++) {
      const leaves = LEAVES.slice(0, size);
      const root = referenceRoot(leaves);
      expect(hex(tree.root(size))).toBe(hex(root));
      for (let index = 0; index < size; index++) {
        const proof = tree.inclusionProof(index, size);
        expect(proof.map(hex)).toEqual(referencePath(index, leaves).map(hex));
        const leaf = leaves[index] as Uint8Array;
        expect(verifyInclusion(leaf, index, size, proof, root)).toBe(true);
        // Any change to the leaf, a hash, the index, the size or the root fails.
        expect(verifyInclusion(flip(leaf), index, size, proof, root)).toBe(false);
        expect(verifyInclusion(leaf, index, size, proof, flip(root, 31))).toBe(false);
        for (let at = 0; at < proof.length; at++) {
          const tampered = proof.map((hash, i) => (i === at ? flip(hash, at) : hash));
          expect(verifyInclusion(leaf, index, size, tampered, root)).toBe(false);
        }
        for (const other of [index - 1, index + 1, size, -1]) {
          if (other !== index) expect(verifyInclusion(leaf, other, size, proof, root)).toBe(false);
        }
        // The size is bound by the signed checkpoint, not by the proof: another size verifies only
        // against that tree's root and only where the two trees' proofs coincide.
        for (const otherSize of [size - 1, size + 1, size * 2]) {
          if (otherSize <= index || otherSize > LEAVES.length) continue;
          const otherLeaves = LEAVES.slice(0, otherSize);
          const same = hex(Buffer.concat(referencePath(index, otherLeaves))) === hex(Buffer.concat(proof));
          expect(verifyInclusion(leaf, index, otherSize, proof, referenceRoot(otherLeaves))).toBe(same);
        }
        expect(verifyInclusion(leaf, index, size, proof.slice(0, -1), root)).toBe(proof.length === 0);
        expect(verifyInclusion(leaf, index, size, [...proof, leaf], root)).toBe(false);
      }
    }
  });

  it('reports malformed proofs as no root', () => {
    const leaf = LEAVES[0] as Uint8Array;
    expect(rootFromInclusionProof(leaf, 0, 0, [])).toBeUndefined();
    expect(rootFromInclusionProof(leaf, 0, 2, [Buffer.alloc(31)])).toBeUndefined();
    expect(rootFromInclusionProof(Buffer.alloc(8), 0, 1, [])).toBeUndefined();
    expect(rootFromInclusionProof(leaf, 0.5, 2, [leaf])).toBeUndefined();
    expect(() => inclusionRanges(3, 3)).toThrow(RangeError);
  });
});

describe('consistency proofs', () => {
  it('match the RFC definition and verify for every pair of sizes up to 40', () => {
    const tree = new MerkleTree(LEAVES);
    for (let to = 1; to <= LEAVES.length; to++) {
      const toRoot = referenceRoot(LEAVES.slice(0, to));
      for (let from = 1; from <= to; from++) {
        const fromRoot = referenceRoot(LEAVES.slice(0, from));
        const proof = tree.consistencyProof(from, to);
        expect(proof.map(hex)).toEqual(referenceSubproof(from, LEAVES.slice(0, to), true).map(hex));
        expect(verifyConsistency(from, to, proof, fromRoot, toRoot), `${from} -> ${to}`).toBe(true);
        expect(verifyConsistency(from, to, proof, flip(fromRoot), toRoot)).toBe(false);
        expect(verifyConsistency(from, to, proof, fromRoot, flip(toRoot))).toBe(false);
        for (let at = 0; at < proof.length; at++) {
          const tampered = proof.map((hash, i) => (i === at ? flip(hash, 7) : hash));
          expect(verifyConsistency(from, to, tampered, fromRoot, toRoot)).toBe(false);
        }
        if (from > 1) expect(verifyConsistency(from - 1, to, proof, fromRoot, toRoot)).toBe(false);
        if (from < to) {
          if (to < LEAVES.length) {
            const next = LEAVES.slice(0, to + 1);
            const same =
              hex(Buffer.concat(referenceSubproof(from, next, true))) === hex(Buffer.concat(proof));
            expect(verifyConsistency(from, to + 1, proof, fromRoot, referenceRoot(next))).toBe(same);
          }
          expect(verifyConsistency(from, to, proof.slice(0, -1), fromRoot, toRoot)).toBe(false);
          expect(verifyConsistency(from, to, [...proof, toRoot], fromRoot, toRoot)).toBe(false);
        }
      }
    }
  });

  it('refuses impossible sizes', () => {
    const root = LEAVES[0] as Uint8Array;
    expect(verifyConsistency(0, 1, [], emptyRoot(), root)).toBe(false);
    expect(verifyConsistency(2, 1, [], root, root)).toBe(false);
    expect(verifyConsistency(1, 1, [root], root, root)).toBe(false);
    expect(() => consistencyRanges(0, 3)).toThrow(RangeError);
  });
});

describe('SubtreeCollector', () => {
  it('builds the same proofs as the whole tree from one pass over the leaves', () => {
    const tree = new MerkleTree(LEAVES);
    const size = 37;
    const collector = new SubtreeCollector();
    const indexes = [0, 5, 6, 7, 20, 31, 32, 36];
    for (const index of indexes) collector.needInclusion(index, size);
    collector.needConsistency(13, 32);
    collector.needConsistency(32, size);
    collector.needRoot(size);
    for (const leaf of LEAVES.slice(0, size)) collector.append(leaf);
    for (const index of indexes) {
      expect(inclusionProofFrom(collector.source, index, size).map(hex)).toEqual(
        tree.inclusionProof(index, size).map(hex),
      );
    }
    expect(consistencyProofFrom(collector.source, 13, 32).map(hex)).toEqual(
      tree.consistencyProof(13, 32).map(hex),
    );
    expect(() => inclusionProofFrom(collector.source, 1, size)).toThrow(/missing subtree/);
  });
});
