// Every way of tampering with an exported run that the verifier must catch, one test per row, on
// a realistic run (every record type; allow, ask and deny decisions) built with the real Ledger.
import type { Bundle, LedgerRecord, RecordBody } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';
import { commit } from '../../json/canonical.js';
import { MemoryStore } from '../../store/memory-store.js';
import { putPolicyDocument } from '../export.js';
import { Ledger } from '../ledger.js';
import { hashRecord } from '../record.js';
import {
  buildBundleFixture,
  FIXTURE_ORIGIN,
  FIXTURE_POLICY,
  FIXTURE_RUN_ID,
  fixtureClock,
  fixtureRunBodies,
  fixtureSigner,
} from '../testing/fixture.js';
import type { VerifyCheck, VerifyOptions, VerifyReport } from './report.js';
import { verifyBundle } from './verify-bundle.js';

const honest = await buildBundleFixture();
const publicKey = honest.signer.verifierKey;
const pinned: VerifyOptions = { publicKey };

type Path = Array<string | number>;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function at(root: unknown, path: Path): Json {
  return path.reduce<unknown>((value, key) => (value as Record<string | number, unknown>)[key], root) as Json;
}
function setAt(root: unknown, path: Path, value: Json | undefined): void {
  const parent = at(root, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path.at(-1) as string | number;
  if (value === undefined) delete parent[key];
  else parent[key] = value;
}
const changeCharacter = (text: string): string =>
  text.length === 0 ? 'a' : `${text.slice(0, -1)}${text.endsWith('a') ? 'b' : 'a'}`;
const ZERO_DIGEST = `sha256:${'0'.repeat(64)}`;

/** The ways to change the value at a path, by its kind. */
function mutationsOf(value: Json): Array<[kind: string, change: (old: Json) => Json | undefined]> {
  if (typeof value === 'string') return [['changed character', (old) => changeCharacter(old as string)]];
  if (typeof value === 'number') return [['plus one', (old) => (old as number) + 1]];
  if (typeof value === 'boolean') return [['flipped', (old) => !old]];
  if (value === null) return [['set', () => ZERO_DIGEST]];
  if (Array.isArray(value)) {
    return [
      ['element added', (old) => [...(old as Json[]), (old as Json[]).at(-1) ?? 'x']],
      ...(value.length > 0
        ? [['element removed', (old: Json) => (old as Json[]).slice(0, -1)] as const]
        : []),
    ] as Array<[string, (old: Json) => Json | undefined]>;
  }
  return [['key added', (old) => ({ ...(old as Record<string, Json>), extra: 'x' })]];
}

interface FieldRow {
  name: string;
  index: number;
  path: Path;
  change: (old: Json) => Json | undefined;
}

/** Every field of every record (nested too), every way its kind can change, and its removal. */
function fieldRows(bundle: Bundle): FieldRow[] {
  const rows: FieldRow[] = [];
  bundle.records.forEach((record, index) => {
    const label = `record ${index} (${(record as LedgerRecord).type})`;
    const visit = (path: Path, value: Json, removable: boolean) => {
      const where = path.slice(1).join('.');
      for (const [kind, change] of mutationsOf(value))
        rows.push({ name: `${label} ${where}: ${kind}`, index, path, change });
      if (removable) rows.push({ name: `${label} ${where}: removed`, index, path, change: () => undefined });
      if (Array.isArray(value)) for (const [i, item] of value.entries()) visit([...path, i], item, false);
      else if (value !== null && typeof value === 'object')
        for (const [key, item] of Object.entries(value)) visit([...path, key], item, true);
    };
    for (const [key, value] of Object.entries(record as Record<string, Json>))
      visit([index, key], value, true);
  });
  return rows;
}

const FIELD_ROWS = fieldRows(honest.bundle);

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

function tampered(change: (bundle: Bundle) => void): Bundle {
  const copy = structuredClone(honest.bundle);
  change(copy);
  return copy;
}

function expectCaught(report: VerifyReport, check: VerifyCheck): void {
  expect(report.ok).toBe(false);
  expect(report.failures.map((failure) => failure.check)).toContain(check);
}

describe('a changed byte in any field of any record is caught', () => {
  it('covers every record and every kind of value', () => {
    expect(new Set(FIELD_ROWS.map((row) => row.index)).size).toBe(honest.bundle.records.length);
    const kinds = new Set(FIELD_ROWS.map((row) => row.name.split(': ').at(-1)));
    for (const kind of [
      'changed character',
      'plus one',
      'flipped',
      'set',
      'element added',
      'element removed',
    ])
      expect(kinds).toContain(kind);
  });

  it.each(FIELD_ROWS)('$name', ({ index, path, change }) => {
    const original = honest.bundle.records[index] as LedgerRecord;
    const bundle = tampered((copy) => {
      const records = copy.records as unknown[];
      setAt(records, path, change(at(records, path)));
    });
    const report = verifyBundle(bundle, pinned);
    expect(report.ok).toBe(false);
    const changed = bundle.records[index] as Partial<LedgerRecord>;
    const named = report.failures.some(
      (failure) =>
        failure.seq === original.seq ||
        (failure.seq !== undefined && failure.seq === changed.seq) ||
        (failure.seq === undefined && failure.type === changed.type),
    );
    expect(named, JSON.stringify(report.failures)).toBe(true);
  });
});

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

describe('removed, reordered and forged records are caught', () => {
  const without = (index: number) =>
    tampered((bundle) => {
      bundle.records.splice(index, 1);
      bundle.proofs.splice(index, 1);
    });

  it.each([0, 5, 9])('record %i deleted', (index) => {
    expectCaught(verifyBundle(without(index), pinned), 'run-sequence');
  });

  it('the last record (run-end) deleted, with strict', () => {
    const last = honest.bundle.records.length - 1;
    expect(verifyBundle(without(last), pinned).ok).toBe(true);
    expectCaught(verifyBundle(without(last), { ...pinned, strict: true }), 'run-end');
  });

  it('two records swapped, with their proofs', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        for (const list of [bundle.records, bundle.proofs] as unknown[][])
          [list[6], list[7]] = [list[7], list[6]];
      }),
      pinned,
    );
    expectCaught(report, 'record-order');
    expectCaught(report, 'chain');
  });

  it('two records swapped, proofs left in place', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        [bundle.records[6], bundle.records[7]] = [bundle.records[7], bundle.records[6]];
      }),
      pinned,
    );
    expectCaught(report, 'inclusion');
  });

  it('a forged record appended, chained correctly but not in the log', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const last = bundle.records.at(-1) as LedgerRecord;
        const forged: LedgerRecord = {
          ...(bundle.records[14] as LedgerRecord),
          seq: last.seq + 1,
          run_seq: last.run_seq + 1,
          prev: hashRecord(last).digest,
        };
        bundle.records.push(forged);
        bundle.proofs.push({ ...(bundle.proofs.at(-1) as Bundle['proofs'][number]), leaf_index: forged.seq });
      }),
      pinned,
    );
    expectCaught(report, 'inclusion');
  });

  it('a forged record inserted in the middle', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const forged = {
          ...(bundle.records[4] as LedgerRecord),
          seq: (bundle.records[4] as LedgerRecord).seq + 1,
        };
        bundle.records.splice(5, 0, forged);
        bundle.proofs.splice(5, 0, structuredClone(bundle.proofs[4] as Bundle['proofs'][number]));
      }),
      pinned,
    );
    expectCaught(report, 'run-sequence');
    expectCaught(report, 'inclusion');
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
