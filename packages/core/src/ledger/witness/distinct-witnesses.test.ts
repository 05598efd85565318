import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../crypto.js';
import { MemoryStore } from '../../store/memory-store.js';
import { Ledger } from '../ledger.js';
import { generateLogSigner } from '../signed-note.js';
import { checkWitnesses } from '../verify/witnesses.js';
import {
  addCosignatures,
  noteCosignatures,
  parseWitnessKey,
  repeatedWitness,
  witnessSignerFromPrivateKey,
} from './cosignature.js';
import { addCheckpointBody, MemoryWitnessState, Witness } from './witness.js';
import { Witnessing } from './witnessing.js';

const ORIGIN = 'callgate.test/distinct';

/** A checkpoint of a small log, cosigned by one witness; the vkeys of that witness and of others. */
async function cosignedOnce() {
  const signer = generateLogSigner(ORIGIN);
  const store = new MemoryStore();
  const ledger = await Ledger.open(store, { signer, origin: ORIGIN });
  await ledger.append('run-1', { type: 'gap', reason: 'r', from_ts: 0, to_ts: 1, calls: 0 });
  const checkpoint = await ledger.checkpoint();
  const w1 = witnessSignerFromPrivateKey('witness.test/w1', sha256('w1'));
  const witness = new Witness({
    signer: w1,
    logs: { [ORIGIN]: signer.verifierKey },
    state: new MemoryWitnessState(),
    clock: () => 1_700_000_000,
  });
  const answer = await witness.addCheckpoint(addCheckpointBody(0, [], checkpoint?.note ?? ''));
  const note = addCosignatures(checkpoint?.note ?? '', answer.body);
  return { note, store, w1: w1.verifierKey };
}

const findingsOf = (note: string, witnesses: string[], quorum: number) => {
  const failures: { check: string; message: string }[] = [];
  checkWitnesses({ checkpoints: [note] } as never, { witnesses, quorum }, {
    fail: (check: string, message: string) => failures.push({ check, message }),
  } as never);
  return failures;
};

describe('a quorum counts distinct witnesses', () => {
  it('one cosignature never meets a quorum of two, however its key is listed (verify)', async () => {
    const { note, w1 } = await cosignedOnce();
    expect(findingsOf(note, [w1], 1)).toEqual([]);
    // The same vkey twice: refused as the same witness, not counted twice.
    expect(findingsOf(note, [w1, w1], 2)).toEqual([
      expect.objectContaining({
        check: 'witness',
        message: expect.stringContaining('is the same witness as'),
      }),
    ]);
    // Counting alone, a key listed twice counts once.
    expect(noteCosignatures(note, [parseWitnessKey(w1), parseWitnessKey(w1)])).toHaveLength(1);
  });

  it('finds any witness listed twice, by name or by public key, and nothing in distinct lists (generated)', () => {
    const signers = ['a', 'b', 'c', 'd', 'e'].map((seed) =>
      witnessSignerFromPrivateKey(`witness.test/${seed}`, sha256(seed)),
    );
    fc.assert(
      fc.property(
        fc.shuffledSubarray(signers, { minLength: 1 }),
        fc.option(
          fc.record({
            of: fc.nat(),
            at: fc.nat(),
            // The same witness again: the same vkey, its key under another name, or another key under its name.
            as: fc.constantFrom('same', 'renamed', 'rekeyed'),
          }),
        ),
        (chosen, repeat) => {
          const keys = chosen.map((signer) => parseWitnessKey(signer.verifierKey));
          if (repeat === null) {
            expect(repeatedWitness(keys)).toBeUndefined();
            return;
          }
          const original = chosen[repeat.of % chosen.length] as (typeof signers)[number];
          const again =
            repeat.as === 'same'
              ? original
              : repeat.as === 'renamed'
                ? witnessSignerFromPrivateKey('witness.test/other-name', original.privateKey)
                : witnessSignerFromPrivateKey(original.name, sha256(`${original.name} again`));
          const at = repeat.at % (keys.length + 1);
          keys.splice(at, 0, parseWitnessKey(again.verifierKey));
          const found = repeatedWitness(keys);
          expect(found).toBeDefined();
          const [first, second] = found as [number, number];
          expect(first).toBeLessThan(second);
          const a = keys[first];
          const b = keys[second];
          expect(
            a?.name === b?.name || Buffer.from(a?.publicKey ?? []).equals(Buffer.from(b?.publicKey ?? [])),
          ).toBe(true);
        },
      ),
    );
  });

  it('a log refuses to submit to one witness listed twice', async () => {
    const { store, w1 } = await cosignedOnce();
    expect(
      () =>
        new Witnessing({
          store,
          witnesses: [
            { url: 'http://127.0.0.1:1', key: w1 },
            { url: 'http://127.0.0.1:2', key: w1 },
          ],
          quorum: 2,
        }),
    ).toThrow(/is the same witness as/);
  });
});
