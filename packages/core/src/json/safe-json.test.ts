import { CallgateError } from '@callgate/protocol';
import fc from 'fast-check';
import { isLosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { numberHeldExactly } from './exact-number.js';
import { checkJsonValue, parseJsonLossless, parseJsonStrict, readArguments } from './safe-json.js';

function refusal(run: () => unknown): CallgateError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CallgateError);
    expect((error as CallgateError).kind).toBe('tool-args-invalid');
    return error as CallgateError;
  }
  throw new Error('expected a refusal');
}

describe('readArguments', () => {
  it('parses a JSON string of an object and passes an object through', () => {
    expect(readArguments('{"a":1,"b":[true,null,"x"]}')).toEqual({ a: 1, b: [true, null, 'x'] });
    expect(readArguments({ a: 1 })).toEqual({ a: 1 });
    expect(readArguments(undefined)).toEqual({});
    expect(readArguments('')).toEqual({});
  });

  it('refuses invalid JSON naming the line and column', () => {
    const error = refusal(() => readArguments('{"a": 1,\n "b": }'));
    expect(error.message).toMatch(/not valid JSON/);
    expect(error.message).toMatch(/line 2, column 7/);
  });

  it('refuses a value that is not an object', () => {
    expect(refusal(() => readArguments('[1,2]')).message).toMatch(/must be a JSON object, got an array/);
    expect(refusal(() => readArguments('42')).message).toMatch(/got a number/);
    expect(refusal(() => readArguments('null')).message).toMatch(/got null/);
  });

  it('refuses integers beyond ±(2^53−1) given as numbers, seeing the original digits', () => {
    const error = refusal(() => readArguments('{"amount": 9007199254740993}'));
    expect(error.message).toMatch(/9007199254740993/);
    expect(error.message).toMatch(/2\^53/);
    expect(refusal(() => readArguments('{"n": -9007199254740992}')).message).toMatch(/-9007199254740992/);
    expect(readArguments('{"n": 9007199254740991}')).toEqual({ n: 9007199254740991 });
    expect(refusal(() => readArguments({ n: 2 ** 60 })).details.path).toBe('arguments.n');
  });

  it('refuses numbers too large to represent (Infinity) and non-finite values', () => {
    expect(refusal(() => readArguments('{"x": 1e400}')).message).toMatch(
      /the number 1e400 is out of a double's range/,
    );
    expect(refusal(() => readArguments({ x: Number.NaN })).message).toMatch(/NaN is not a JSON number/);
    expect(refusal(() => readArguments({ x: [Number.POSITIVE_INFINITY] })).details.path).toBe(
      'arguments.x[0]',
    );
  });

  it('calls a decimal a decimal even when its double is whole, and an integer an integer', () => {
    for (const digits of ['123456789012345678.5', '9007199254740992.5']) {
      const message = refusal(() => readArguments(`{"x": ${digits}}`)).message;
      expect(message).toBe(
        `arguments.x: the number ${digits} has digits a double does not hold (it would be read as ${String(Number(digits))}); send it as a string`,
      );
    }
    expect(refusal(() => readArguments('{"x": 12345678901234567890}')).message).toContain(
      'the integer 12345678901234567890 is beyond ±(2^53−1): a double does not hold its digits',
    );
    expect(refusal(() => readArguments('{"x": 1e20}')).message).toContain(
      'the integer 1e20 is beyond ±(2^53−1)',
    );
  });

  it('refuses lone surrogates in strings and keys', () => {
    expect(refusal(() => readArguments('{"s": "\\ud800"}')).message).toMatch(/lone UTF-16 surrogate/);
    expect(refusal(() => readArguments({ s: 'a\udc00b' })).details.path).toBe('arguments.s');
    expect(readArguments({ s: '😀' })).toEqual({ s: '😀' });
  });

  it('refuses nesting deeper than 64', () => {
    const deep = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`;
    expect(refusal(() => readArguments(deep)).message).toMatch(/nesting deeper than 64/);
    const ok = `${'{"a":'.repeat(63)}1${'}'.repeat(63)}`;
    expect(() => readArguments(ok)).not.toThrow();
  });

  it('refuses arguments over the size limit, configurable', () => {
    const big = JSON.stringify({ text: 'x'.repeat(2 * 1024 * 1024) });
    expect(refusal(() => readArguments(big)).message).toMatch(/over the limit of 1048576/);
    expect(
      refusal(() => readArguments({ text: 'x'.repeat(200) }, { maxBytes: 100, maxDepth: 64 })).message,
    ).toMatch(/over the size limit of 100 bytes/);
  });

  it('refuses keys that would pollute prototypes', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const error = refusal(() => readArguments(`{"outer": {"${key}": {"admin": true}}}`));
      expect(error.message).toContain(`"${key}"`);
      expect(error.details.path).toBe(`arguments.outer.${key}`);
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('names the JSON path of an integer beyond 2^53 in JSON text, with its original digits', () => {
    const error = refusal(() => readArguments('{"invoice": {"lines": [1, 9007199254740993]}}'));
    expect(error.details.path).toBe('arguments.invoice.lines[1]');
    expect(error.message).toContain('9007199254740993');
  });

  it('refuses absurdly deep JSON text before parsing it, with its position', () => {
    const error = refusal(() => readArguments(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`));
    expect(error.message).toMatch(/nesting deeper than 64 \(line 1, column 69\)/);
    const bracketsInAString = { s: `${'['.repeat(75)}"[[` };
    expect(readArguments(JSON.stringify(bracketsInAString))).toEqual(bracketsInAString);
  });

  it('refuses duplicate keys', () => {
    expect(refusal(() => readArguments('{"a": 1, "a": 2}')).message).toMatch(/Duplicate key/);
  });

  it('refuses values that are not plain JSON', () => {
    expect(refusal(() => checkJsonValue({ when: new Date() })).message).toMatch(/Date object is not JSON/);
    expect(refusal(() => checkJsonValue({ f: () => 1 })).message).toMatch(/function is not JSON/);
    expect(refusal(() => checkJsonValue({ b: 1n })).message).toMatch(/bigint is not JSON/);
  });

  it('parseJsonStrict names what it parsed', () => {
    expect(refusal(() => parseJsonStrict('{', 'result')).message).toMatch(/^result is not valid JSON/);
  });
});

describe('decimals a double does not hold', () => {
  /** Decimal tokens with long fractions and exponents, most of them beyond a double's precision. */
  const token = fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.bigInt({ min: 0n, max: 10n ** 20n }),
      fc.bigInt({ min: 0n, max: 10n ** 25n }),
      fc.constantFrom('', 'e-400', 'E5', 'e-320', 'e+2'),
    )
    .map(([sign, whole, fraction, exponent]) => `${sign}${whole}.${fraction}${exponent}`);
  const heldAsSafe = (text: string) => {
    const number = Number(text);
    return Number.isFinite(number) && (!Number.isInteger(number) || Number.isSafeInteger(number));
  };

  it('are refused in arguments quoting the digits and the path, or read as their double (generated)', () => {
    fc.assert(
      fc.property(token, (text) => {
        fc.pre(heldAsSafe(text));
        const input = `{"order":{"amount":${text}}}`;
        if (numberHeldExactly(text)) {
          expect(readArguments(input)).toEqual({ order: { amount: Number(text) } });
          return;
        }
        const error = refusal(() => readArguments(input));
        expect(error.details).toEqual({ path: 'arguments.order.amount' });
        expect(error.message).toContain(` ${text} `);
        expect(error.message).toContain('send it as a string');
      }),
    );
  });

  it('are kept with their digits by the lossless envelope parser, and refused by checkJsonValue', () => {
    const body = parseJsonLossless('{"arguments":{"amount":1000.00000000000001,"ok":1.10}}') as {
      arguments: { amount: unknown; ok: unknown };
    };
    expect(body.arguments.ok).toBe(1.1);
    expect(isLosslessNumber(body.arguments.amount)).toBe(true);
    expect((body.arguments.amount as { value: string }).value).toBe('1000.00000000000001');
    const error = refusal(() => checkJsonValue(body.arguments));
    expect(error.message).toBe(
      'arguments.amount: the number 1000.00000000000001 has digits a double does not hold (it would be read as 1000); send it as a string',
    );
  });
});
