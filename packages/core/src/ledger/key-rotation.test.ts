import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { followKeyRotations, openKeyRotation, signKeyRotation } from './key-rotation.js';
import { logSignerFromPrivateKey, signNote } from './signed-note.js';

const ORIGIN = 'example.com/log';
const signer = (seed: number) => logSignerFromPrivateKey(ORIGIN, new Uint8Array(32).fill(seed));

/** A statement from `named` to `next` at `size`, signed by `signedBy` (the old key's place) and `next`. */
function statement(named: number, signedBy: number, next: number, size: number): string {
  const text = `callgate-key-rotation/v1\n${ORIGIN}\n${size}\n${signer(named).verifierKey}\n${signer(next).verifierKey}\n`;
  const once = signNote(text, signer(signedBy));
  const second = signNote(text, signer(next));
  return `${once}${second.slice(second.lastIndexOf('\n\n') + 2)}`;
}

describe('openKeyRotation', () => {
  it('opens a statement made by the key in force', () => {
    const note = signKeyRotation(signer(1), signer(2), 5);
    expect(openKeyRotation(note, signer(1).verifierKey)).toEqual({
      ok: true,
      value: { origin: ORIGIN, size: 5, oldKey: signer(1).verifierKey, newKey: signer(2).verifierKey },
    });
  });

  it('refuses a statement whose old key is not the key in force, though the key in force signed it', () => {
    const note = statement(3, 1, 2, 5);
    const opened = openKeyRotation(note, signer(1).verifierKey);
    expect(opened).toEqual({
      ok: false,
      reason: `the statement names the old key ${signer(3).verifierKey}, but the key in force is ${signer(1).verifierKey}: a rotation starts from the key in force`,
    });
    expect(followKeyRotations(signer(1).verifierKey, [note]).problem).toMatch(
      /^key rotation 1: the statement names the old key/,
    );
  });

  it('opens a statement only with the key it names as old and was signed by (generated keys)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 255 }),
        fc.integer({ min: 1, max: 255 }),
        fc.integer({ min: 1, max: 255 }),
        fc.integer({ min: 1, max: 255 }),
        (named, signedBy, inForce, next) => {
          fc.pre(next !== named && next !== signedBy);
          const opened = openKeyRotation(statement(named, signedBy, next, 7), signer(inForce).verifierKey);
          expect(opened.ok).toBe(named === inForce && signedBy === inForce);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a key in force that is not a verifier key, without throwing', () => {
    const note = signKeyRotation(signer(1), signer(2), 5);
    expect(openKeyRotation(note, 'garbage')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the key in force is not a verifier key/),
    });
  });

  it('follows a chain from its first key or from a later key it made, and refuses a link that starts elsewhere', () => {
    const chain = [signKeyRotation(signer(1), signer(2), 5), signKeyRotation(signer(2), signer(3), 9)];
    const keys = (start: number, statements: string[]) => {
      const followed = followKeyRotations(signer(start).verifierKey, statements);
      return { keys: followed.periods.map((period) => period.key), problem: followed.problem };
    };
    expect(keys(1, chain)).toEqual({
      keys: [1, 2, 3].map((seed) => signer(seed).verifierKey),
      problem: undefined,
    });
    expect(keys(2, chain)).toEqual({
      keys: [2, 3].map((seed) => signer(seed).verifierKey),
      problem: undefined,
    });
    expect(keys(3, chain)).toEqual({ keys: [signer(3).verifierKey], problem: undefined });
    // The second link signed by the key in force (2) but naming another old key (4).
    const broken = [chain[0] as string, statement(4, 2, 3, 9)];
    expect(keys(1, broken).problem).toMatch(/^key rotation 2: the statement names the old key/);
    // A key no statement starts from or made.
    expect(keys(7, chain).problem).toMatch(/^key rotation 1: not signed by the key in force/);
  });
});
