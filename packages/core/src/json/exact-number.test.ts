import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactnessInDoubt, numberHeldExactly } from './exact-number.js';

/**
 * The reference, written apart from the classifier: a token's value as a BigInt scaled by a power
 * of ten, compared with the value of the double's Number::toString text after scaling both to the
 * same power. Exponents here stay within what the generators draw (a few hundred).
 */
function scaled(text: string): { units: bigint; power: number } {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) throw new Error(`not a number token: ${text}`);
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const units = BigInt(`${sign}${whole}${fraction}`);
  return { units, power: Number(exponent) - fraction.length };
}

function referenceHeldExactly(text: string): boolean {
  const number = Number(text);
  if (!Number.isFinite(number)) return false;
  const sent = scaled(text);
  const held = scaled(String(number));
  const power = Math.min(sent.power, held.power);
  const left = sent.units * 10n ** BigInt(sent.power - power);
  const right = held.units * 10n ** BigInt(held.power - power);
  return left === right;
}

const digit = fc.constantFrom(...'0123456789'.split(''));
const digits = (min: number, max: number) =>
  fc.array(digit, { minLength: min, maxLength: max }).map((list) => list.join(''));
const wholePart = fc.oneof(
  fc.constant('0'),
  fc.tuple(fc.constantFrom(...'123456789'.split('')), digits(0, 24)).map(([first, rest]) => first + rest),
);
const exponentPart = fc.oneof(
  fc.constant(''),
  fc
    .tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 400 }))
    .map(([letter, sign, power]) => `${letter}${sign}${power}`),
  fc
    .tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 30 }))
    .map(([letter, sign, power]) => `${letter}${sign}${String(power).padStart(3, '0')}`),
);

/** Random decimal tokens: signs, leading and trailing zeros, fractions, exponents. */
const randomToken = fc
  .tuple(fc.constantFrom('', '-'), wholePart, fc.option(digits(1, 40), { nil: undefined }), exponentPart)
  .map(
    ([sign, whole, fraction, exponent]) =>
      `${sign}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent}`,
  );

/** A double's own text, perhaps respelled (zeros appended, exponent shifted) or with digits added. */
const nearDouble = fc
  .tuple(
    fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.double({ min: 0, max: 2.2250738585072014e-308, noNaN: true }), // subnormals
      fc.integer({ min: -1000, max: 1000 }).map((step) => 2 ** 53 + step + 0.5),
      fc.integer({ min: -1000, max: 1000 }).map((step) => -(2 ** 53) + step),
    ),
    fc.constantFrom('as-is', 'zeros', 'digit', 'digits'),
    digits(1, 25),
  )
  .map(([number, change, extra]) => {
    const text = String(number);
    const [mantissa, exponent = ''] = text.split('e');
    const withDot = mantissa.includes('.') ? mantissa : `${mantissa}.`;
    const tail = exponent === '' ? '' : `e${exponent}`;
    switch (change) {
      case 'as-is':
        return text;
      case 'zeros':
        return `${withDot}000${tail}`;
      case 'digit':
        return `${withDot}${'0'.repeat(extra.length)}1${tail}`;
      default:
        return `${withDot}${extra}${tail}`;
    }
  });

/** 17 to 40 significant digits placed anywhere in a double's range and beyond. */
const longToken = fc
  .tuple(fc.constantFrom('', '-'), digits(17, 40), fc.integer({ min: -360, max: 330 }))
  .map(([sign, body, power]) => `${sign}0.${body}e${power}`);

describe('numberHeldExactly', () => {
  it('agrees with a BigInt-scaled reference on generated decimal texts', () => {
    fc.assert(
      fc.property(fc.oneof(randomToken, nearDouble, longToken), (text) => {
        expect(numberHeldExactly(text)).toBe(referenceHeldExactly(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('says every double is held exactly by its own text, however it is spelled', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (number) => {
        expect(numberHeldExactly(String(number))).toBe(true);
        expect(numberHeldExactly(String(number).replace('e', 'E'))).toBe(true);
      }),
    );
  });

  it('is only in doubt where the cheap test says so', () => {
    fc.assert(
      fc.property(randomToken, (text) => {
        if (!exactnessInDoubt(text) && /[.eE]/.test(text)) expect(numberHeldExactly(text)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['1.10', true],
    ['1.0', true],
    ['1E2', true],
    ['0.1', true],
    ['-0.0', true],
    ['5e-324', true],
    ['1e21', true],
    ['1000.00000000000001', false],
    ['1e-400', false],
    ['-1e-400', false],
    ['1e400', false],
    ['2.0000000000000001', false],
    ['123456789012345678.5', false],
    ['0.1000000000000000000001', false],
    ['9007199254740993', false],
  ])('classifies %s', (text, held) => {
    expect(numberHeldExactly(text)).toBe(held);
    expect(referenceHeldExactly(text)).toBe(held);
  });
});
