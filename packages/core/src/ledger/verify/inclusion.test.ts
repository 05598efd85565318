import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHash, encodeBase64 } from '../base64.js';
import { leafHash, verifyInclusion } from '../merkle.js';
import { MerkleTree } from '../proofs.js';
import { type InclusionItem, verifyInclusions } from './inclusion.js';

const LEAVES = Array.from({ length: 300 }, (_, i) => leafHash(`leaf ${i}`));
const TREE = new MerkleTree(LEAVES);

/** What verifying each proof on its own says. */
function oneByOne(items: InclusionItem[], size: number, root: Uint8Array): boolean[] {
  return items.map((item) => {
    const hashes = item.hashes.map(decodeHash);
    if (hashes.some((hash) => hash === undefined)) return false;
    return verifyInclusion(item.leaf, item.index, size, hashes as Uint8Array[], root);
  });
}

function itemsFor(indexes: number[], size: number): InclusionItem[] {
  return indexes.map((index) => ({
    leaf: LEAVES[index] as Uint8Array,
    index,
    hashes: TREE.inclusionProof(index, size).map(encodeBase64),
  }));
}

describe('verifyInclusions', () => {
  it('accepts every proof of every leaf, for every tree size up to 70', () => {
    for (let size = 1; size <= 70; size++) {
      const items = itemsFor(
        Array.from({ length: size }, (_, i) => i),
        size,
      );
      expect(verifyInclusions(items, size, TREE.root(size)).every(Boolean), `size ${size}`).toBe(true);
    }
  });

  it('agrees with one-by-one verification on random leaves and random tampering', () => {
    const tamper = fc.record({
      item: fc.nat(),
      kind: fc.constantFrom('leaf', 'index', 'hash', 'drop', 'extra', 'swap', 'base64', 'none'),
      at: fc.nat(),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: LEAVES.length }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 40 }),
        fc.array(tamper, { maxLength: 4 }),
        (size, picks, tampers) => {
          const indexes = picks.map((pick) => pick % size).sort((a, b) => a - b);
          const items = itemsFor(indexes, size);
          for (const { item: pick, kind, at } of tampers) {
            const position = pick % items.length;
            const item = items[position] as InclusionItem;
            const hashes = [...item.hashes];
            const hashAt = hashes.length === 0 ? 0 : at % hashes.length;
            if (kind === 'leaf') items[position] = { ...item, leaf: leafHash(`other ${at}`) };
            if (kind === 'index') items[position] = { ...item, index: item.index + 1 + (at % 3) };
            if (kind === 'hash' && hashes.length > 0) {
              hashes[hashAt] = encodeBase64(leafHash(`forged ${at}`));
              items[position] = { ...item, hashes };
            }
            if (kind === 'drop' && hashes.length > 0) items[position] = { ...item, hashes: hashes.slice(1) };
            if (kind === 'extra')
              items[position] = { ...item, hashes: [...hashes, encodeBase64(leafHash('x'))] };
            if (kind === 'swap' && hashes.length > 1) items[position] = { ...item, hashes: hashes.reverse() };
            if (kind === 'base64' && hashes.length > 0) {
              hashes[hashAt] = `${(hashes[hashAt] as string).slice(0, 42)}B=`;
              items[position] = { ...item, hashes };
            }
          }
          const root = TREE.root(size);
          expect(verifyInclusions(items, size, root)).toEqual(oneByOne(items, size, root));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('refuses all proofs under a wrong root or size', () => {
    const items = itemsFor([0, 1, 2, 3, 4], 37);
    expect(verifyInclusions(items, 37, TREE.root(36))).toEqual([false, false, false, false, false]);
    expect(verifyInclusions(items, 0, TREE.root(37))).toEqual([false, false, false, false, false]);
  });
});
