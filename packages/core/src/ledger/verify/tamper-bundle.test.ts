// Tampering with the rest of an exported run, one test per row: proofs, checkpoints and keys,
// truncation, and calls, policies and openings that break the rules.
import type { Bundle, RecordBody } from '@callgate/protocol';
import {
  buildBundleFixture,
  changeCharacter,
  expectCaught,
  FIXTURE_ORIGIN,
  FIXTURE_POLICY,
  FIXTURE_RUN_ID,
  fixtureClock,
  fixtureRunBodies,
  fixtureSigner,
  tamperBase,
  ZERO_DIGEST,
} from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { commit } from '../../json/canonical.js';
import { MemoryStore } from '../../store/memory-store.js';
import { putPolicyDocument } from '../export.js';
import { Ledger } from '../ledger.js';
import { verifyBundle } from './verify-bundle.js';

const { honest, pinned, tampered } = await tamperBase();

const attacker = fixtureSigner('attacker key');
const rebuilt = await buildBundleFixture({
  signer: attacker,
  script: (bodies) =>
    bodies.map((body) =>
      body.type === 'approval-response' ? { ...body, reviewer: 'mallory@example.com' } : body,
    ),
});

// An honest export made before the run's tail was written: a truncated view of the log.
const truncation = await (async () => {
  const store = new MemoryStore();
  const ledger = await Ledger.open(store, {
    signer: honest.signer,
    origin: FIXTURE_ORIGIN,
    clock: fixtureClock(),
  });
  const digest = await putPolicyDocument(store, FIXTURE_POLICY);
  const { bodies, openings } = fixtureRunBodies(digest, store);
  await openings;
  for (const body of bodies.slice(0, 9)) await ledger.append(FIXTURE_RUN_ID, body as RecordBody);
  const early = await ledger.exportRun(FIXTURE_RUN_ID);
  for (const body of bodies.slice(9)) await ledger.append(FIXTURE_RUN_ID, body as RecordBody);
  const final = await ledger.checkpoint();
  return { early, size: ledger.size, note: final?.note as string };
})();

describe('changed proofs and checkpoints are caught', () => {
  it.each(honest.bundle.proofs.map((_, index) => index))(
    'inclusion proof of record %i: a hash changed',
    (index) => {
      const report = verifyBundle(
        tampered((bundle) => {
          const proof = bundle.proofs[index] as Bundle['proofs'][number];
          proof.hashes[0] =
            changeCharacter((proof.hashes[0] as string).slice(0, -2)) + proof.hashes[0]?.slice(-2);
        }),
        pinned,
      );
      expectCaught(report, 'inclusion');
    },
  );

  it.each([
    [
      'leaf index',
      (proof: Bundle['proofs'][number]) => Object.assign(proof, { leaf_index: proof.leaf_index + 1 }),
    ],
    [
      'tree size',
      (proof: Bundle['proofs'][number]) => Object.assign(proof, { tree_size: proof.tree_size - 1 }),
    ],
    ['a hash dropped', (proof: Bundle['proofs'][number]) => proof.hashes.pop()],
  ])('inclusion proof: %s', (_, change) => {
    expectCaught(
      verifyBundle(
        tampered((bundle) => change(bundle.proofs[3] as never)),
        pinned,
      ),
      'inclusion',
    );
  });

  it.each([0, 1])('checkpoint %i with a bad signature', (index) => {
    const report = verifyBundle(
      tampered((bundle) => {
        const note = bundle.checkpoints[index] as string;
        const at = note.length - 10;
        bundle.checkpoints[index] =
          `${note.slice(0, at)}${note[at] === 'A' ? 'B' : 'A'}${note.slice(at + 1)}`;
      }),
      pinned,
    );
    expectCaught(report, 'checkpoint-signature');
  });

  it('checkpoint with a changed size line', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        bundle.checkpoints[1] = (bundle.checkpoints[1] as string).replace(
          /\n(\d+)\n/,
          (_, size) => `\n${Number(size) + 1}\n`,
        );
      }),
      pinned,
    );
    expectCaught(report, 'checkpoint-signature');
  });

  it('checkpoints in the wrong order', () => {
    const report = verifyBundle(
      tampered((bundle) => bundle.checkpoints.reverse()),
      pinned,
    );
    expectCaught(report, 'checkpoint-order');
  });

  it('a changed consistency proof', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const proof = bundle.consistency[0] as Bundle['consistency'][number];
        proof.hashes[0] =
          bundle.proofs[0]?.hashes[0] === proof.hashes[0]
            ? (bundle.proofs[1]?.hashes[0] as string)
            : (bundle.proofs[0]?.hashes[0] as string);
      }),
      pinned,
    );
    expectCaught(report, 'consistency');
  });

  it('a missing checkpoint', () => {
    expectCaught(
      verifyBundle(
        tampered((bundle) => bundle.checkpoints.splice(0)),
        pinned,
      ),
      'checkpoint-missing',
    );
  });
});

describe('a re-signed log, a wrong key and a truncated log are caught', () => {
  it('the chain rebuilt, re-Merkled and re-signed with another key, when the real key is pinned', () => {
    expect(verifyBundle(rebuilt.bundle).ok).toBe(true);
    const report = verifyBundle(rebuilt.bundle, pinned);
    expectCaught(report, 'public-key');
    expectCaught(report, 'checkpoint-signature');
  });

  it("the bundle's public key swapped for another", () => {
    const report = verifyBundle(
      tampered((bundle) => {
        bundle.public_key = attacker.verifierKey;
      }),
      pinned,
    );
    expectCaught(report, 'public-key');
  });

  it('a wrong public key pinned', () => {
    expectCaught(verifyBundle(honest.bundle, { publicKey: attacker.verifierKey }), 'checkpoint-signature');
  });

  it('a pinned key that is not a key', () => {
    expectCaught(verifyBundle(honest.bundle, { publicKey: 'not a key' }), 'public-key');
  });

  it('a truncated tail is not visible without outside knowledge', () => {
    expect(verifyBundle(truncation.early, pinned).ok).toBe(true);
  });

  it('a truncated tail, when the log size is known (expectSize)', () => {
    expectCaught(verifyBundle(truncation.early, { ...pinned, expectSize: truncation.size }), 'truncation');
  });

  it('a truncated tail, when a later checkpoint is known', () => {
    const report = verifyBundle(truncation.early, { ...pinned, knownCheckpoints: [truncation.note] });
    expectCaught(report, 'truncation');
  });

  it('a truncated tail, with strict', () => {
    expectCaught(verifyBundle(truncation.early, { ...pinned, strict: true }), 'run-end');
  });
});

describe('misbehaving calls, policies and openings are caught', () => {
  const scripted = async (script: (bodies: RecordBody[]) => RecordBody[]) =>
    verifyBundle((await buildBundleFixture({ script })).bundle, pinned);
  const indexOf = (bodies: RecordBody[], type: RecordBody['type'], callId: string) =>
    bodies.findIndex((body) => body.type === type && 'call_id' in body && body.call_id === callId);

  it('an ask executed twice', async () => {
    const report = await scripted((bodies) => {
      const end = indexOf(bodies, 'call-end', 'call_2');
      return [...bodies.slice(0, end + 1), bodies[end] as RecordBody, ...bodies.slice(end + 1)];
    });
    expectCaught(report, 'execution');
  });

  it('an executed denied call', async () => {
    const report = await scripted((bodies) =>
      bodies.map((body) =>
        body.type === 'call-end' && body.call_id === 'cg-5f2a9c'
          ? { ...body, outcome: 'ok', error_kind: undefined }
          : body,
      ),
    );
    expectCaught(report, 'execution');
  });

  it('an ask executed without an approval response', async () => {
    const report = await scripted((bodies) => bodies.filter((body) => body.type !== 'approval-response'));
    expectCaught(report, 'execution');
  });

  it('an ask executed after a denied approval', async () => {
    const report = await scripted((bodies) =>
      bodies.map((body) => (body.type === 'approval-response' ? { ...body, status: 'denied' } : body)),
    );
    expectCaught(report, 'execution');
  });

  it('an approval of other arguments than decided', async () => {
    const report = await scripted((bodies) =>
      bodies.map((body) =>
        body.type === 'approval-response' ? { ...body, arguments_digest: ZERO_DIGEST } : body,
      ),
    );
    expectCaught(report, 'approval');
    expectCaught(report, 'execution');
  });

  it('an ask with two approval requests', async () => {
    const report = await scripted((bodies) => {
      const request = indexOf(bodies, 'approval-request', 'call_2');
      return [...bodies.slice(0, request + 1), bodies[request] as RecordBody, ...bodies.slice(request + 1)];
    });
    expectCaught(report, 'approval');
  });

  it('a call run without a decision', async () => {
    const report = await scripted((bodies) =>
      bodies.filter((body) => !(body.type === 'call-decision' && body.call_id === 'call_1')),
    );
    expectCaught(report, 'execution');
  });

  it('a call ended (not run) without a decision', async () => {
    const report = await scripted((bodies) =>
      bodies
        .filter((body) => !(body.type === 'call-decision' && body.call_id === 'cg-5f2a9c'))
        .map((body) =>
          body.type === 'call-end' && body.call_id === 'cg-5f2a9c'
            ? { ...body, outcome: 'decided-not-completed' }
            : body,
        ),
    );
    expectCaught(report, 'execution');
    expect(report.failures.map((failure) => failure.message).join('\n')).toMatch(
      /ended \(decided-not-completed\) without a decision/,
    );
  });

  it('fields the format does not define are reported as a warning', async () => {
    const { bundle } = await buildBundleFixture();
    const report = verifyBundle({ ...bundle, extra: 1 }, pinned);
    expect(report.ok).toBe(true);
    expect(report.warnings.join('\n')).toMatch(/does not define, ignored: extra/);
  });

  it('a run that does not begin with run-start', async () => {
    const report = await scripted((bodies) => bodies.filter((body) => body.type !== 'run-start'));
    expectCaught(report, 'run-sequence');
  });

  it('a run without run-end is a warning, and a failure with strict', async () => {
    const { bundle } = await buildBundleFixture({
      script: (bodies) => bodies.filter((body) => body.type !== 'run-end'),
    });
    const lenient = verifyBundle(bundle, pinned);
    expect(lenient.ok).toBe(true);
    expect(lenient.warnings.join('\n')).toMatch(/does not end with a run-end record/);
    expectCaught(verifyBundle(bundle, { ...pinned, strict: true }), 'run-end');
  });

  it('a policy document altered', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const policy = bundle.policies[0]?.policy as typeof FIXTURE_POLICY;
        (policy.rules[1] as { effect: string }).effect = 'allow';
      }),
      pinned,
    );
    expectCaught(report, 'policy-digest');
    expectCaught(report, 'policy-missing');
  });

  it('a policy document left out', () => {
    expectCaught(
      verifyBundle(
        tampered((bundle) => bundle.policies.splice(0)),
        pinned,
      ),
      'policy-missing',
    );
  });

  it('an opening whose value does not match', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const opening = bundle.openings?.[1] as NonNullable<Bundle['openings']>[number];
        opening.value = { contract_id: 'C-1043' };
      }),
      pinned,
    );
    expectCaught(report, 'opening');
  });

  it('an opening whose salt changed', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const opening = bundle.openings?.[0] as NonNullable<Bundle['openings']>[number];
        opening.salt = changeCharacter(opening.salt.slice(0, -1)) + opening.salt.slice(-1);
      }),
      pinned,
    );
    expectCaught(report, 'opening');
  });

  it('an opening of a commitment no record holds', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const extra = commit('smuggled in');
        bundle.openings?.push({ commitment: extra.commitment, salt: extra.salt, value: 'smuggled in' });
      }),
      pinned,
    );
    expectCaught(report, 'opening');
  });
});
