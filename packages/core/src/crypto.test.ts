import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ed25519PublicKey, ed25519Sign, ed25519Verify, hmacSha256Hex, hmacSha256HexKeyed } from './crypto.js';

describe('hmacSha256HexKeyed', () => {
  it('gives node:crypto’s HMAC-SHA256 for any key (shorter, as long as and longer than a block) and messages', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 150 }),
        fc.array(fc.uint8Array({ maxLength: 200 }), { minLength: 1, maxLength: 4 }),
        (key, messages) => {
          const mac = hmacSha256HexKeyed(key);
          // Several messages under one key: nothing of one message may leak into the next.
          for (const message of messages) {
            const expected = createHmac('sha256', key).update(message).digest('hex');
            expect(mac(message)).toBe(expected);
            expect(hmacSha256Hex(key, message)).toBe(expected);
          }
        },
      ),
    );
  });

  it('keeps the key it was given: changing the caller’s bytes later changes nothing', () => {
    const key = new Uint8Array(32).fill(7);
    const mac = hmacSha256HexKeyed(key);
    const message = new Uint8Array([1, 2, 3]);
    const before = mac(message);
    key.fill(9);
    expect(mac(message)).toBe(before);
  });
});

describe('ed25519Sign (key objects kept per seed array)', () => {
  it('signs with the seed the array holds now, also after the array was changed', () => {
    const seed = fc.uint8Array({ minLength: 32, maxLength: 32 });
    fc.assert(
      fc.property(
        seed,
        fc.array(seed, { minLength: 1, maxLength: 4 }),
        fc.uint8Array({ maxLength: 64 }),
        (first, later, message) => {
          // One array, signed with, then overwritten with other seeds (as a caller reusing it would).
          const key = Uint8Array.from(first);
          for (const next of [first, ...later]) {
            key.set(next);
            const signature = ed25519Sign(key, message);
            expect(ed25519Verify(ed25519PublicKey(Uint8Array.from(next)), message, signature)).toBe(true);
            expect(
              Buffer.from(ed25519PublicKey(key)).equals(Buffer.from(ed25519PublicKey(Uint8Array.from(next)))),
            ).toBe(true);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
