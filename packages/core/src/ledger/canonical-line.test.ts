import { buildBundleFixture } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastCanonicalJson } from '../json/canonical.js';
import { isCanonicalLine, serializeBundle } from './bundle-text.js';
import { isCertainlyCanonical } from './canonical-line.js';

/** The reference verdict: the line is exactly the canonical serializer's form of its parse. */
function reference(line: string): boolean {
  try {
    return fastCanonicalJson(JSON.parse(line)) === line;
  } catch {
    return false;
  }
}

const { bundle } = await buildBundleFixture();
const recordLines = bundle.records.map((record) => fastCanonicalJson(record));

/** Strings as hostile as JSON allows: escapes, controls, lone and paired surrogates, non-ASCII. */
const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom(
    '',
    '"',
    '\\',
    '\b\f\n\r\t',
    '\u0000\u001f\u007f',
    '\ud800',
    'x\udc00',
    '\ud83d\ude00',
    '/',
    'é',
  ),
);
const oddNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 1e21, 1e-7, 2 ** 53, 2 ** 53 + 2, 999_999_999_999_999, 1_000_000_000_000_000, 0.1),
);
const oddKey = fc.oneof(oddString, fc.constantFrom('1', '10', '9', 'a', 'B', '__proto__', 'seq', 'prev'));
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    oddString,
    oddNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(oddKey, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** Number texts as JSON allows them, canonical or not: long fractions, many zeros, 17 digits. */
const numberText = fc
  .tuple(
    fc.boolean(),
    fc.stringMatching(/^(0|[1-9][0-9]{0,20})$/),
    fc.option(fc.stringMatching(/^0{0,8}[0-9]{1,18}$/), { nil: undefined }),
  )
  .map(
    ([negative, integer, fraction]) =>
      `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}`,
  );
const numberLine = fc
  .tuple(numberText, fc.constantFrom('{"a":#}', '[#]', '#', '{"a":[1,#],"b":#}'))
  .map(([number, layout]) => layout.replaceAll('#', number));

/** Textual changes that keep a line JSON but may take it out of canonical form. */
const edits: Array<(line: string, at: number) => string> = [
  (line) => line,
  // Repeat the first key of an object (JSON.parse keeps the last value).
  (line, at) => {
    const open = line.indexOf('{"', at % Math.max(1, line.length));
    if (open < 0) return line;
    const end = line.indexOf('":', open);
    return end < 0
      ? line
      : `${line.slice(0, end + 2)}0,${line.slice(open + 1, end + 2)}${line.slice(end + 2)}`;
  },
  (line, at) => `${line.slice(0, at % (line.length + 1))} ${line.slice(at % (line.length + 1))}`,
  (line) => line.replace(/:(\d+)([,}\]])/, ':$1.0$2'),
  (line) => line.replace(/:(\d+)([,}\]])/, ':$1e0$2'),
  (line) => line.replace(/:(\d)/, ':-$1'),
  (line) => line.replace(/:0([,}\]])/, ':-0$1'),
  (line) => line.replace(/:(\d+)/, ':12345678901234567890$1'),
  (line) => line.replace('/', '\\/'),
  (line) => line.replace(/a/, '\\u0061'),
  (line) => line.replace('\\u001f', '\\u001F').replace('\\n', '\\u000a'),
  (line) => line.replace(/"([^"\\]*)":([^,}]*),"([^"\\]*)":/, '"$3":$2,"$1":'),
  (line) => line.replace('\\ud800', '\\uD800'),
];

describe('isCertainlyCanonical', () => {
  it('is certain of every record line callgate writes', () => {
    for (const line of recordLines) expect(isCertainlyCanonical(line), line).toBe(true);
    const text = serializeBundle(bundle);
    expect(text.split('\n').length).toBeGreaterThan(3);
  });

  it('is never certain of a line the canonical serializer does not give, and the line check agrees with it', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          value.map((item) => ({ item, base: undefined as string | undefined })),
          fc.constantFrom(...recordLines).map((base) => ({ item: undefined, base })),
          numberLine.map((base) => ({ item: undefined, base })),
        ),
        fc.constantFrom('canonical', 'stringify'),
        fc.nat(edits.length - 1),
        fc.nat(),
        ({ item, base }, form, edit, at) => {
          let line: string;
          try {
            line = base ?? (form === 'canonical' ? fastCanonicalJson(item) : JSON.stringify(item));
          } catch {
            return;
          }
          if (line === undefined) return;
          line = (edits[edit] as (line: string, at: number) => string)(line, at);
          let parsed: unknown;
          try {
            parsed = JSON.parse(line);
          } catch {
            return; // the reader refuses text that is not JSON before asking
          }
          const expected = reference(line);
          if (isCertainlyCanonical(line)) expect(expected, line).toBe(true);
          expect(isCanonicalLine(line, parsed), line).toBe(expected);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
