import { describe, expect, it } from 'vitest';
import { buildBundleFixture, FIXTURE_RUN_ID } from '../testing/fixture.js';
import { verifyBundle } from './verify-bundle.js';

describe('verifyBundle on an honest export', () => {
  it('accepts the bundle with the pinned key, strict, and the known size', async () => {
    const { bundle, signer, ledger } = await buildBundleFixture();
    const report = verifyBundle(JSON.parse(JSON.stringify(bundle)), {
      publicKey: signer.verifierKey,
      strict: true,
      expectSize: ledger.size,
    });
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.records).toBe(16);
    expect(report.checkpoints).toBe(2);
    expect(report.warnings).toEqual([expect.stringMatching(/in-memory store/)]);
    expect(bundle.records.every((record) => (record as { run_id: string }).run_id === FIXTURE_RUN_ID)).toBe(
      true,
    );
    expect(bundle.consistency).toHaveLength(1);
    expect(bundle.openings?.length).toBeGreaterThan(5);
    expect(bundle.policies).toHaveLength(1);
  });

  it('warns when no key is pinned', async () => {
    const { bundle } = await buildBundleFixture();
    const report = verifyBundle(bundle);
    expect(report.ok).toBe(true);
    expect(report.warnings).toContainEqual(expect.stringMatching(/no public key pinned/));
  });

  it('refuses what is not a bundle, naming the check', () => {
    for (const input of [null, 42, {}, { format: 'callgate-bundle/2' }]) {
      const report = verifyBundle(input);
      expect(report.ok).toBe(false);
      expect(report.failures[0]?.check).toBe('bundle-shape');
    }
  });
});
