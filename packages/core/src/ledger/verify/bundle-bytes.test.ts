import { buildBundleFixture } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCanonicalLine, parseBundleText, serializeBundle } from '../bundle-text.js';
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

  it('reads the end of a file from its bytes as from its text: the closing line cut, moved or doubled', () => {
    // The closing line `]}` is found in the bytes themselves when they are ASCII; changes near the
    // end (where changes anywhere seldom fall) must be refused or read as the text's are.
    const ending = fc.constantFrom('', '\n', '\n\n', ']}', ']', '}', ' ', ',', '\r', '\u00e9');
    fc.assert(
      fc.property(fc.nat(8), ending, fc.nat(3), (back, piece, cut) => {
        const at = Math.max(0, bytes.length - back);
        const changed = Buffer.concat([
          bytes.subarray(0, at),
          Buffer.from(piece, 'utf8'),
          bytes.subarray(Math.min(bytes.length, at + cut)),
        ]);
        const decoded = changed.toString('utf8');
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

/**
 * The reference reading of the record lines (as callgate read them before reading in place):
 * split on every line break, trailing empty lines dropped, the last `]}`, each other line a
 * record, all but the last ending with ",".
 */
function referenceRecordLines(text: string): unknown {
  try {
    const all = text.slice(text.indexOf('\n') + 1).split('\n');
    while (all.length > 0 && all.at(-1) === '') all.pop();
    if (all.at(-1) !== ']}') return 'threw: last line';
    all.pop();
    const lines: string[] = [];
    for (let index = 0; index < all.length; index++) {
      const raw = all[index] as string;
      const last = index === all.length - 1;
      if (!last && !raw.endsWith(',')) return `threw: line ${index + 2} of the bundle: a record line`;
      const line = last ? raw : raw.slice(0, -1);
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        return `threw: line ${index + 2} of the bundle is not a JSON record`;
      }
      if (!isCanonicalLine(line, record)) return `threw: line ${index + 2} of the bundle is not its record's`;
      lines.push(line);
    }
    return lines;
  } catch (error) {
    return `threw: ${(error as Error).message}`;
  }
}

describe('the record lines of a bundle file', () => {
  it('are read in place exactly as splitting the text on line breaks reads them', () => {
    const piece = fc.constantFrom('\n', ',', ',\n', ']}', '\n]}', '\r', ' ', '', '\n\n', '{}', '{},\n');
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), piece, fc.nat(3)), { maxLength: 3 }), (changes) => {
        let changed = text;
        for (const [where, insert, cut] of changes) {
          // After the first line (its fields are read apart), near the end as often as anywhere.
          const firstLine = changed.indexOf('\n') + 1;
          const span = changed.length - firstLine + 1;
          const from =
            where % 2 === 0 ? Math.max(firstLine, changed.length - (where % 12)) : firstLine + (where % span);
          changed = changed.slice(0, from) + insert + changed.slice(Math.min(changed.length, from + cut));
        }
        const expected = referenceRecordLines(changed);
        const outcome = read(changed);
        if (Array.isArray(expected)) expect((outcome as { lines?: string[] }).lines).toEqual(expected);
        else expect(outcome).toMatch(/^threw: /);
        if (typeof expected === 'string' && expected !== 'threw: last line')
          expect(outcome as string).toContain(expected.slice('threw: '.length));
        if (expected === 'threw: last line') expect(outcome as string).toMatch(/last line is not/);
      }),
      { numRuns: 3000 },
    );
  });
});
