import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadPolicy } from './policy.js';
import { readWholeNumber, wholeNumberProblem } from './whole-number.js';

/** The message loading `text` is refused with; fails the test when it loads. */
function refusal(text: string): string {
  try {
    loadPolicy(text, { source: 'policy.yaml' });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`loaded: ${text}`);
}

/** Every whole-number field of a policy, as YAML around the value written. */
const POLICY_FIELDS = [
  {
    field: 'limits.run.max_calls',
    yaml: (value: string) => `version: 1\nlimits: { run: { max_calls: ${value} } }\n`,
  },
  {
    field: 'limits.tools.send_invoice.max_calls',
    yaml: (value: string) => `version: 1\nlimits: { tools: { send_invoice: { max_calls: ${value} } } }\n`,
  },
];

/** Each bad value, and what the message must say about it. */
const BAD_VALUES: ReadonlyArray<[string, RegExp]> = [
  ['9007199254740992', /9007199254740992 is beyond the largest safe integer, 9007199254740991/],
  ['-1', /expected a whole number, 0 or more \(got -1\)/],
  ['1.5', /expected a whole number \(got 1\.5\)/],
  ['"1"', /expected a whole number \(got "1"\)/],
  ['1e400', /1e400/],
];

describe('whole-number fields of a policy', () => {
  it('refuses each bad value in each field, naming the field and saying what is wrong (table)', () => {
    for (const { field, yaml } of POLICY_FIELDS)
      for (const [value, says] of BAD_VALUES) {
        const message = refusal(yaml(value));
        expect(message, `${field}: ${value}`).toMatch(/^policy\.yaml:2:\d+: /);
        expect(message, `${field}: ${value}`).toContain(field);
        expect(message, `${field}: ${value}`).toMatch(says);
        expect(message, `${field}: ${value}`).not.toMatch(
          /2\^53.*expected a whole number|expected a whole number.*9007199254740992/,
        );
      }
  });
});

describe('wholeNumberProblem and readWholeNumber', () => {
  it('take exactly the safe whole numbers within the bounds (generated)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer(), fc.double(), fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n })),
        (given) => {
          const value = typeof given === 'bigint' ? Number(given) : given;
          const problem = wholeNumberProblem(value, { minimum: 0, maximum: 1000 });
          // -0 is refused as a spelling (`--port -0`), whatever its bounds.
          expect(problem === undefined).toBe(
            Number.isSafeInteger(value) && value >= 0 && value <= 1000 && !Object.is(value, -0),
          );
          if (Number.isInteger(value) && !Number.isSafeInteger(value) && value > 0)
            expect(problem).toMatch(/beyond the largest safe integer/);
        },
      ),
      { examples: [[-0], [0], [1000], [1001], [2 ** 53]] },
    );
  });

  it('reads decimal digits as written, never rounding past 2^53 − 1 (generated)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 70n }), (given) => {
        const read = readWholeNumber(given.toString(), { minimum: 0 });
        if (given <= BigInt(Number.MAX_SAFE_INTEGER)) expect(read).toEqual({ value: Number(given) });
        else
          expect(read).toEqual({
            problem: expect.stringMatching(new RegExp(`^${given} is beyond the largest safe integer`)),
          });
      }),
    );
    for (const text of ['1e3', '0x10', '2.0', ' 5', '+5', '80.0000000000000001', ''])
      expect(readWholeNumber(text, { minimum: 0 })).toEqual({
        problem: `expected a whole number written in digits (got ${JSON.stringify(text)})`,
      });
  });
});
