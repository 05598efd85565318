// The verifier tells the arguments that ran from the model's (docs/ledger.md, invariant 5): an
// `effective-arguments` record verifies after its call's decision, naming the decided arguments;
// one naming other arguments, or no decided call, fails `effective-arguments`.
import type { RecordBody } from '@callgate/protocol';
import { buildBundleFixture } from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../json/canonical.js';
import { verifyBundle } from './verify-bundle.js';

function withEffective(change: (body: RecordBody & { type: 'effective-arguments' }) => RecordBody) {
  return (bodies: RecordBody[]) =>
    bodies.map((body) => (body.type === 'effective-arguments' ? change(body) : body));
}

describe('verifyBundle: effective arguments', () => {
  it('accepts the record of the arguments that ran beside its decision', async () => {
    const { bundle, signer } = await buildBundleFixture();
    expect(bundle.records.some((record) => (record as { type: string }).type === 'effective-arguments')).toBe(
      true,
    );
    expect(verifyBundle(bundle, { publicKey: signer.verifierKey, strict: true }).failures).toEqual([]);
  });

  it('fails a record naming other model arguments than its decision', async () => {
    const { bundle, signer } = await buildBundleFixture({
      script: withEffective((body) => ({ ...body, arguments_digest: digestOf({ other: true }) })),
    });
    const report = verifyBundle(bundle, { publicKey: signer.verifierKey });
    expect(report.failures).toContainEqual(
      expect.objectContaining({
        check: 'effective-arguments',
        message: expect.stringMatching(/other model arguments/),
      }),
    );
  });

  it('fails a record for a call that was never decided', async () => {
    const { bundle, signer } = await buildBundleFixture({
      script: withEffective((body) => ({ ...body, call_id: 'call_never' })),
    });
    const report = verifyBundle(bundle, { publicKey: signer.verifierKey });
    expect(report.failures).toContainEqual(expect.objectContaining({ check: 'effective-arguments' }));
  });
});
