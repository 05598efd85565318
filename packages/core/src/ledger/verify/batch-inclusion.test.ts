// callgate-bundle/2: one batch inclusion proof for all the records of a run, instead of one
// RFC 9162 proof per record (callgate-bundle/1, still written with `proofs`).
import type { BundleV2 } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBase64 } from '../base64.js';
import { batchProofRanges, rootFromBatchProof } from '../batch-proof.js';
import { leafHash } from '../merkle.js';
import { MerkleTree } from '../proofs.js';
import { buildBundleFixture, FIXTURE_RUN_ID } from '../testing/fixture.js';
import { verifyBundle } from './verify-bundle.js';

function tree(size: number): { tree: MerkleTree; leaves: Uint8Array[] } {
  const leaves = Array.from({ length: size }, (_, index) => leafHash(`leaf ${index}`));
  return { tree: new MerkleTree(leaves), leaves };
}

/** The batch proof of `indices` from a whole tree, and the proven leaves packed as the verifier reads them. */
function proofOf(whole: MerkleTree, leaves: Uint8Array[], indices: number[]) {
  const hashes = batchProofRanges(indices, whole.size).map(([start, end]) =>
    encodeBase64(new MerkleTree(leaves.slice(start, end)).root()),
  );
  const packed = new Uint8Array(indices.length * 32);
  indices.forEach((index, slot) => {
    packed.set(leaves[index] as Uint8Array, slot * 32);
  });
  return { hashes, packed };
}

const subsets = fc
  .integer({ min: 1, max: 300 })
  .chain((size) =>
    fc
      .uniqueArray(fc.integer({ min: 0, max: size - 1 }), { minLength: 1, maxLength: size })
      .map((picked) => ({ size, indices: [...picked].sort((a, b) => a - b) })),
  );

describe('batch inclusion proofs', () => {
  it('give the RFC 9162 root for any set of leaves of any tree, and nothing else does', () => {
    fc.assert(
      fc.property(subsets, fc.nat(), ({ size, indices }, pick) => {
        const { tree: whole, leaves } = tree(size);
        const { hashes, packed } = proofOf(whole, leaves, indices);
        const root = rootFromBatchProof(indices, packed, size, hashes);
        expect(root && Buffer.from(root).equals(whole.root())).toBe(true);
        // Any one hash changed, one missing, one too many, a leaf changed or another tree size: no root.
        if (hashes.length > 0) {
          const changed = [...hashes];
          changed[pick % hashes.length] = encodeBase64(leafHash('forged'));
          const forged = rootFromBatchProof(indices, packed, size, changed);
          expect(forged !== undefined && Buffer.from(forged).equals(whole.root())).toBe(false);
          expect(rootFromBatchProof(indices, packed, size, hashes.slice(1))).toBeUndefined();
        }
        expect(rootFromBatchProof(indices, packed, size, [...hashes, hashes[0] ?? 'AAAA'])).toBeUndefined();
        const tampered = packed.slice();
        tampered[(pick % indices.length) * 32] ^= 1;
        const fromTampered = rootFromBatchProof(indices, tampered, size, hashes);
        expect(fromTampered !== undefined && Buffer.from(fromTampered).equals(whole.root())).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('cost about 2·log2(n) hashes per run of consecutive leaves, none for a whole tree', () => {
    expect(batchProofRanges([0, 1, 2, 3, 4, 5, 6], 7)).toEqual([]);
    expect(batchProofRanges([5], 8)).toEqual([
      [0, 4],
      [4, 5],
      [6, 8],
    ]);
    expect(batchProofRanges([], 8)).toEqual([[0, 8]]);
    expect(() => batchProofRanges([3, 3], 8)).toThrow(RangeError);
    expect(() => batchProofRanges([8], 8)).toThrow(RangeError);
  });
});

describe('callgate-bundle/2', () => {
  async function exported() {
    const { ledger, signer } = await buildBundleFixture();
    const v2 = JSON.parse(
      JSON.stringify(await ledger.exportRun(FIXTURE_RUN_ID, { openings: true })),
    ) as BundleV2;
    const v1 = JSON.parse(JSON.stringify(await ledger.exportRun(FIXTURE_RUN_ID, { proofs: true })));
    return { v1, v2, signer, ledger };
  }

  it('is what an export writes unless proofs are asked for, and verifies like version 1', async () => {
    const { v1, v2, signer, ledger } = await exported();
    expect(v2.format).toBe('callgate-bundle/3');
    expect('proofs' in v2).toBe(false);
    expect(v2.inclusion.tree_size).toBe(ledger.size);
    expect(v1.format).toBe('callgate-bundle/1');
    expect(v1.proofs).toHaveLength(v1.records.length);
    for (const bundle of [v1, v2]) {
      const report = verifyBundle(bundle, {
        publicKey: signer.verifierKey,
        strict: true,
        expectSize: ledger.size,
      });
      expect(report.failures).toEqual([]);
      expect(report.records).toBe(bundle.records.length);
      expect(bundle.records.length).toBeGreaterThan(10);
    }
    expect(JSON.stringify(v2).length).toBeLessThan(JSON.stringify(v1).length);
  });

  it('fails inclusion for a changed proof hash, a wrong tree size, a record removed or changed', async () => {
    const { v2, signer } = await exported();
    const failuresOf = (mutate: (bundle: BundleV2) => void) => {
      const bundle = structuredClone(v2);
      mutate(bundle);
      return verifyBundle(bundle, { publicKey: signer.verifierKey }).failures.map((failure) => failure.check);
    };
    expect(
      failuresOf((bundle) => {
        bundle.inclusion.hashes[0] = encodeBase64(leafHash('forged'));
      }),
    ).toContain('inclusion');
    expect(
      failuresOf((bundle) => {
        bundle.inclusion.hashes.pop();
      }),
    ).toContain('inclusion');
    expect(
      failuresOf((bundle) => {
        bundle.inclusion.tree_size -= 1;
      }),
    ).toContain('inclusion');
    // A record dropped from the middle: its run's chain breaks and the tree no longer adds up.
    const dropped = failuresOf((bundle) => {
      bundle.records.splice(3, 1);
    });
    expect(dropped).toEqual(expect.arrayContaining(['inclusion', 'run-sequence']));
    expect(
      failuresOf((bundle) => {
        (bundle.records[2] as { ts: number }).ts += 1;
      }),
    ).toContain('inclusion');
  });
});
