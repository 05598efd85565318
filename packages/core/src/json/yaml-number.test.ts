import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { numberHeldExactly } from './exact-number.js';
import { yamlNumberProblem, yamlNumberToken } from './yaml-number.js';

describe('yamlNumberToken', () => {
  it('writes each YAML 1.2 core-schema spelling as the JSON token of the same value', () => {
    expect(yamlNumberToken('+5')).toBe('5');
    expect(yamlNumberToken('.5')).toBe('0.5');
    expect(yamlNumberToken('-.5e3')).toBe('-0.5e3');
    expect(yamlNumberToken('5.')).toBe('5');
    expect(yamlNumberToken('5.e3')).toBe('5e3');
    expect(yamlNumberToken('0x1F')).toBe('31');
    expect(yamlNumberToken('0o17')).toBe('15');
    expect(yamlNumberToken('1000.00000000000001')).toBe('1000.00000000000001');
    expect(yamlNumberToken('.inf')).toBeUndefined();
    expect(yamlNumberToken('.nan')).toBeUndefined();
  });

  it('keeps every JSON number token as it is', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = String(value);
        expect(yamlNumberToken(text)).toBe(text);
      }),
    );
  });
});

describe('yamlNumberProblem', () => {
  it('accepts a number a double holds, however it is spelt', () => {
    for (const text of ['1000', '0.1', '1.50', '1e3', '+5', '.5', '0x10', '-0.0', '9007199254740991'])
      expect(yamlNumberProblem(text), text).toBeUndefined();
  });

  it('refuses, quoting the digits as written, a number a double does not hold', () => {
    expect(yamlNumberProblem('1000.00000000000001')).toBe(
      'the number 1000.00000000000001 has digits a double does not hold (it would be read as 1000)',
    );
    expect(yamlNumberProblem('12345678901234567890')).toContain(
      'the integer 12345678901234567890 is beyond ±(2^53−1): a double does not hold its digits',
    );
    expect(yamlNumberProblem('1e-400')).toContain('the number 1e-400 has digits a double does not hold');
    expect(yamlNumberProblem('1e400')).toContain('the number 1e400 has digits a double does not hold');
    expect(yamlNumberProblem('.inf')).toContain('.inf is not finite');
  });

  it('judges a decimal as the gate does (numberHeldExactly on its digits)', () => {
    const decimal = fc
      .tuple(
        fc.integer({ min: 0, max: 99999 }),
        fc.stringMatching(/^[0-9]{0,22}$/),
        fc.integer({ min: -400, max: 400 }),
      )
      .map(([whole, fraction, exponent]) => `${whole}${fraction ? `.${fraction}` : ''}e${exponent}`);
    fc.assert(
      fc.property(decimal, (text) => {
        expect(yamlNumberProblem(text) === undefined).toBe(numberHeldExactly(text));
      }),
    );
  });
});
