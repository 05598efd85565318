// What a bundle's openings and run keys claim: a run it opens must let every decision's keyed
// arguments digest be checked; a bundle that opens nothing claims nothing (docs/ledger.md, run_keys).
import type { BundleV3 } from '@callgate/protocol';
import { testEngine } from '@callgate/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle } from './verify-bundle.js';

const unchecked = /arguments_digest could not be checked/;

describe('arguments-digest over openings and run keys', () => {
  let opened: BundleV3;
  let keysOnly: BundleV3;
  let publicKey: string;
  beforeAll(async () => {
    const { engine, runId, signer } = await testEngine({ vault: true });
    await engine.decide(runId, [
      { id: 'c1', tool: 'read_file', arguments: { path: 'a.txt' } },
      { id: 'c2', tool: 'read_file', arguments: { path: 'b.txt' } },
    ]);
    await engine.endRun(runId);
    opened = (await engine.exportRun(runId, { openings: true })) as BundleV3;
    keysOnly = (await engine.exportRun(runId, { revealRunKeys: true })) as BundleV3;
    publicKey = signer.verifierKey;
    await engine.close();
  });

  it('checks every opened decision of a complete export, and claims nothing without openings', () => {
    expect(opened.run_keys).toHaveLength(1);
    for (const bundle of [opened, keysOnly, { ...opened, openings: [] }]) {
      const report = verifyBundle(bundle, { publicKey, strict: true });
      expect(report.failures).toEqual([]);
      expect(report.warnings.join('\n')).not.toMatch(unchecked);
    }
  });

  it('names each decision an opening or run key is missing for: a warning, with --strict a failure', () => {
    const decided = new Set(
      (opened.records as Array<Record<string, unknown>>)
        .filter((record) => record.type === 'call-decision')
        .map((record) => record.arguments_commitment),
    );
    const one = opened.openings?.find((opening) => decided.has(opening.commitment));
    const withoutOne = { ...opened, openings: opened.openings?.filter((opening) => opening !== one) };
    const { run_keys: _keys, ...withoutKeys } = opened;
    for (const [bundle, count] of [
      [withoutOne, 1],
      [withoutKeys, 2],
      [{ ...opened, run_keys: [] }, 2],
    ] as const) {
      const lenient = verifyBundle(bundle, { publicKey });
      expect(lenient.failures).toEqual([]);
      expect(lenient.warnings.filter((warning) => unchecked.test(warning))).toHaveLength(count);
      const strict = verifyBundle(bundle, { publicKey, strict: true });
      expect(strict.failures.filter((failure) => failure.check === 'arguments-digest')).toHaveLength(count);
    }
  });
});
