import { RECORD_TYPES, type RecordBody } from '@callgate/protocol';
import {
  buildBundleFixture,
  FIXTURE_ORIGIN,
  FIXTURE_RUN_ID,
  fixtureClock,
  fixtureSigner,
} from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory-store.js';
import { Ledger } from '../ledger.js';
import { merkleRoot } from '../merkle.js';
import { signCheckpoint } from '../signed-note.js';
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
    expect(report.records).toBe(19);
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

  it('covers every record type of the protocol', async () => {
    const { bundle } = await buildBundleFixture();
    const types = new Set(bundle.records.map((record) => (record as { type: string }).type));
    expect([...types].sort()).toEqual([...RECORD_TYPES].sort());
  });

  it('accepts a denied call retried as a new attempt that was allowed and ran', async () => {
    const { bundle, signer } = await buildBundleFixture({
      script: (bodies) => {
        const end = bodies.findIndex((body) => body.type === 'call-end' && body.call_id === 'cg-5f2a9c');
        const decision = bodies.find((body) => body.type === 'call-decision' && body.call_id === 'cg-5f2a9c');
        const retry = [
          { ...decision, attempt: 2, effect: 'allow', error_kind: undefined, rules: ['cleanup'] },
          { ...bodies[end], attempt: 2, outcome: 'ok', error_kind: undefined },
        ] as RecordBody[];
        return [...bodies.slice(0, end + 1), ...retry, ...bodies.slice(end + 1)];
      },
    });
    expect(verifyBundle(bundle, { publicKey: signer.verifierKey }).failures).toEqual([]);
  });

  it('warns about an approval of edited arguments', async () => {
    const { bundle, signer } = await buildBundleFixture({
      script: (bodies) =>
        bodies.map((body) => (body.type === 'approval-response' ? { ...body, edited: true } : body)),
    });
    const report = verifyBundle(bundle, { publicKey: signer.verifierKey });
    expect(report.ok).toBe(true);
    expect(report.warnings).toContainEqual(expect.stringMatching(/approved edited arguments/));
  });
});

describe('verifyBundle with known checkpoints', () => {
  it('accepts a known checkpoint the bundle holds, and warns about one it cannot relate', async () => {
    const { bundle, signer, store } = await buildBundleFixture();
    const root = merkleRoot(await store.readLeafHashes(0, 3));
    const early = signCheckpoint({ origin: FIXTURE_ORIGIN, size: 3, root }, signer);
    const known = bundle.checkpoints.at(-1) as string;
    const report = verifyBundle(bundle, { publicKey: signer.verifierKey, knownCheckpoints: [known, early] });
    expect(report.failures).toEqual([]);
    expect(report.warnings).toContainEqual(
      expect.stringMatching(/known checkpoint 2 .* is not in the bundle/),
    );
  });

  it('catches a fork: a known checkpoint of the same size with another root, same key', async () => {
    const { bundle, signer, ledger } = await buildBundleFixture();
    const fork = await Ledger.open(new MemoryStore(), {
      signer,
      origin: FIXTURE_ORIGIN,
      clock: fixtureClock(),
    });
    for (let i = 0; i < ledger.size; i++)
      await fork.append('forked-run', { type: 'run-end', status: 'failed', calls: i });
    const forkNote = (await fork.checkpoint())?.note as string;
    const report = verifyBundle(bundle, { publicKey: signer.verifierKey, knownCheckpoints: [forkNote] });
    expect(report.ok).toBe(false);
    expect(report.failures.map((failure) => failure.check)).toContain('consistency');
  });

  it('refuses a known checkpoint not signed by the pinned key', async () => {
    const { bundle, signer } = await buildBundleFixture();
    const other = await buildBundleFixture({ signer: fixtureSigner('other key') });
    const report = verifyBundle(bundle, {
      publicKey: signer.verifierKey,
      knownCheckpoints: [other.bundle.checkpoints.at(-1) as string],
    });
    expect(report.failures.map((failure) => failure.check)).toContain('checkpoint-signature');
  });
});

describe('verifyBundle on a bundle emptied of its records', () => {
  it('fails: an exported run has at least its run-start', async () => {
    const { bundle, signer, ledger } = await buildBundleFixture();
    const emptied = { ...JSON.parse(JSON.stringify(bundle)), records: [], proofs: [] };
    const report = verifyBundle(emptied, { publicKey: signer.verifierKey, expectSize: ledger.size });
    expect(report.ok).toBe(false);
    expect(report.failures.map((failure) => failure.check)).toContain('bundle-shape');
  });
});
