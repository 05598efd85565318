import { parseJsonLossless } from '@callgate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MESSAGE_MAX_DEPTH, parseClientJson } from './json-rpc.js';

/** Number texts, among them ones a double cannot hold and ones it rounds. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.constantFrom('9007199254740993', '-9007199254740993', '9007199254740992', '1e400', '-1e400', '1E-400'),
  fc.constantFrom('-0', '0.0', '1.0', '1e2', '0.1', '123456789012345678901234567890.5', '2e53'),
  // Decimals whose digits a double does or does not hold (JSON.parse rounds the latter silently).
  fc.constantFrom('1000.00000000000001', '1e-400', '-1e-400', '0.1000000000000000000001', '5e-324', '1.10'),
  fc.constantFrom(
    '2.0000000000000001',
    '123456789012345678.5',
    '2.2250738585072011e-308',
    '1E2',
    '-0.0e-999',
  ),
  fc
    .tuple(
      fc.bigInt({ min: 0n, max: 10n ** 25n }),
      fc.bigInt({ min: 0n, max: 10n ** 25n }),
      fc.integer({ min: -340, max: 20 }),
    )
    .map(([whole, fraction, power]) => `${whole}.${fraction}e${power}`),
);
/** Keys, among them repeated ones and the ones the lossless path refuses. */
const key = fc.oneof(
  fc.constantFrom('a', 'b', 'id', 'jsonrpc', 'method', '1', '0', '__proto__', 'constructor', 'prototype'),
  fc.string({ maxLength: 4, unit: 'binary' }),
);
const stringText = fc.oneof(
  fc.string({ maxLength: 6, unit: 'binary' }).map((value) => JSON.stringify(value)),
  fc.constantFrom('"\\ud800"', '"x\\udc00y"', '"\\u0041:\\"{"', '"a\\\\"', '"\\n\\t"'),
);

/** JSON texts (and a few near-JSON ones), written token by token so keys may repeat. */
const { text } = fc.letrec<{ text: string; value: string; object: string; array: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    stringText,
    fc.constantFrom('true', 'false', 'null', 'NaN', 'Infinity', '01', '-', '"unterminated'),
    tie('object'),
    tie('array'),
  ),
  object: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).chain((members) =>
    fc.boolean().map((repeat) => {
      const written = members.map(([name, value]) => `${JSON.stringify(name)}:${value}`);
      // A repeated key, with the same value or another.
      if (repeat && members.length > 0)
        written.push(`${JSON.stringify(members[0]?.[0])}:${members.at(-1)?.[1]}`);
      return `{${written.join(', ')}}`;
    }),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  text: fc.oneof(
    tie('value'),
    fc.nat({ max: MESSAGE_MAX_DEPTH + 3 }).map((depth) => `${'['.repeat(depth)}1${']'.repeat(depth)}`),
  ),
}));

/** A parsed value with lossless numbers spelled out, so equality sees their digits. */
function shown(value: unknown): unknown {
  // lossless-json's LosslessNumber (core keeps the digits in one when a double cannot hold them).
  if ((value as { isLosslessNumber?: unknown } | null)?.isLosslessNumber === true) {
    const number = value as { value: string; constructor: { name: string } };
    return { lossless: number.value, kind: number.constructor.name };
  }
  if (Array.isArray(value)) return value.map(shown);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, shown(item)]));
  }
  return value;
}

function outcome(parse: () => unknown): { value?: unknown; error?: string } {
  try {
    return { value: shown(parse()) };
  } catch (error) {
    return { error: String(error) };
  }
}

describe('parseClientJson', () => {
  it('gives exactly what the lossless parser gives, values and refusals alike', () => {
    fc.assert(
      fc.property(text, (written) => {
        const limits = { maxBytes: 4 * 1024 * 1024, maxDepth: MESSAGE_MAX_DEPTH };
        expect(outcome(() => parseClientJson(written, limits.maxBytes))).toEqual(
          outcome(() => parseJsonLossless(written, 'message', limits)),
        );
      }),
      { numRuns: 3_000 },
    );
  });

  it('keeps the digits of an integer beyond 2^53 and refuses a key given twice with two values', () => {
    const big = parseClientJson('{"id":1,"params":{"n":9007199254740993}}', 1024) as {
      params: { n: { value: string } };
    };
    expect(big.params.n.value).toBe('9007199254740993');
    expect(() => parseClientJson('{"id":1,"id":2}', 1024)).toThrow(/id/);
    expect(parseClientJson('{"id":1,"method":"x"}', 1024)).toEqual({ id: 1, method: 'x' });
  });
});
