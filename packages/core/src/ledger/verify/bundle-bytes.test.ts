import { buildBundleFixture } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBundleText, serializeBundle } from '../bundle-text.js';
import { verifyBundleText } from './verify-bundle.js';

const { bundle } = await buildBundleFixture();
const text = serializeBundle(bundle);
const bytes = Buffer.from(text, 'utf8');

/** The outcome of reading, as a comparable value: the parse, or the error's message. */
function read(input: string | Uint8Array): unknown {
  try {
    return parseBundleText(input);
  } catch (error) {
    return `threw: ${(error as Error).message}`;
  }
}

/** Byte runs a changed file may hold: non-ASCII, broken UTF-8, newlines, escapes, spaces. */
const insert = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 4 }),
  fc
    .constantFrom('\u2014', '\u00e9', '\ud83d\ude00', '\u2028', '\n', ',\n', ' ', '\\u0041', '"a":1,')
    .map((piece) => Buffer.from(piece, 'utf8')),
  fc.constantFrom([0xe2], [0xe2, 0x80], [0xff], [0xed, 0xa0, 0x80]).map((piece) => Uint8Array.from(piece)),
);

describe("verifyBundleText of a file's bytes", () => {
  it('reads the bytes of a bundle as it reads their UTF-8 decoding, changed or not', () => {
    expect(verifyBundleText(bytes).ok).toBe(verifyBundleText(text).ok);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), insert, fc.nat(3)), { maxLength: 3 }), (changes) => {
        let changed: Buffer = bytes;
        for (const [where, piece, cut] of changes) {
          const at = where % (changed.length + 1);
          changed = Buffer.concat([
            changed.subarray(0, at),
            piece,
            changed.subarray(Math.min(changed.length, at + cut)),
          ]);
        }
        const decoded = changed.toString('utf8');
        expect(read(changed)).toEqual(read(decoded));
        expect(verifyBundleText(changed)).toEqual(verifyBundleText(decoded));
      }),
      { numRuns: 300 },
    );
  });

  it('reads a file of one line, or of no line break at all, as its text', () => {
    for (const input of ['', '{}', '{"format":"callgate-bundle/3","records":[', text.replaceAll('\n', '')])
      expect(verifyBundleText(Buffer.from(input))).toEqual(verifyBundleText(input));
  });
});
