// Ids and progress tokens of every numeric form, as a client may spell them (JSON-RPC 2.0 §4,
// MCP progress): read from the text as the stdio line filter and the HTTP side read them.
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isIntegerDigits, withGateIds, writeJson } from './exact-json.js';
import { parseClientJson } from './json-rpc.js';
import { invalidRequest, refuseLine } from './jsonrpc-errors.js';

/**
 * A number spelled in any RFC 8259 form (digits, fraction, exponent, trailing zeros), with
 * whether it stands for an integer, computed on its exact decimal value.
 */
const spelledNumber = fc
  .record({
    mantissa: fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.constantFrom(0n, 1n, 15n, 100n)),
    exponent: fc.integer({ min: -30, max: 30 }),
    zeros: fc.nat(3),
    split: fc.nat(40),
    negative: fc.boolean(),
    bareExponent: fc.constantFrom('e', 'E'),
  })
  .map(({ mantissa, exponent, zeros, split, negative, bareExponent }) => {
    const digits = `${mantissa}${'0'.repeat(zeros)}`;
    const scale = exponent - zeros; // value = digits × 10^scale
    const at = split % (digits.length + 1);
    const whole = digits.slice(0, at).replace(/^0+(?=.)/, '') || '0';
    const fraction = digits.slice(at);
    const power = scale + fraction.length;
    const text = `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}${power !== 0 ? `${bareExponent}${power}` : ''}`;
    const integer = mantissa === 0n || exponent >= 0 || mantissa % 10n ** BigInt(-exponent) === 0n;
    return { text, integer };
  });

/** Its exact value as a fraction's numerator over 10^30 (compares spellings by value). */
function exactValue(text: string): bigint {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (!match) throw new Error(`not a number: ${text}`);
  const fraction = match[3] ?? '';
  const power = Number(match[4] ?? 0) - fraction.length + 60;
  const magnitude = BigInt(`${match[2]}${fraction}`);
  const value = power >= 0 ? magnitude * 10n ** BigInt(power) : magnitude / 10n ** BigInt(-power);
  return match[1] ? -value : value;
}

const request = (id: string, token = '1') =>
  `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"_meta":{"progressToken":${token}}}}`;

describe('numbers in ids and progress tokens', () => {
  it('isIntegerDigits tells integers from numbers with a fraction, in every spelling', () => {
    fc.assert(
      fc.property(spelledNumber, ({ text, integer }) => {
        expect(isIntegerDigits(text)).toBe(integer);
      }),
    );
  });

  it('an id is accepted when it is an integer (answered with its value), refused naming "id" otherwise, alike on stdio and HTTP', () => {
    fc.assert(
      fc.property(spelledNumber, ({ text, integer }) => {
        const line = request(text);
        const overHttp = invalidRequest(withGateIds(parseClientJson(line, 1 << 20)), true);
        const overStdio = refuseLine(line);
        expect(overStdio).toEqual(overHttp);
        if (!integer) {
          expect(overStdio).toEqual({
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32600,
              message: expect.stringContaining('"id" must be a string or an integer, got'),
            },
          });
          return;
        }
        expect(overStdio).toBeUndefined();
        const message = withGateIds(parseClientJson(line, 1 << 20)) as { id: unknown };
        expect(JSONRPCMessageSchema.safeParse(message).success).toBe(true);
        const answered = /"id":([^,}]+)/.exec(writeJson({ jsonrpc: '2.0', id: message.id, result: {} }))?.[1];
        expect(exactValue(answered ?? '')).toBe(exactValue(text));
      }),
    );
  });

  it('a progress token of any number is accepted and written back with its value (its digits when a double cannot hold them)', () => {
    fc.assert(
      fc.property(spelledNumber, ({ text }) => {
        const line = request('1', text);
        expect(refuseLine(line)).toBeUndefined();
        const message = withGateIds(parseClientJson(line, 1 << 20)) as {
          params: { _meta: { progressToken: unknown } };
        };
        expect(JSONRPCMessageSchema.safeParse(message).success).toBe(true);
        const token = message.params._meta.progressToken;
        const written = writeJson({ progressToken: token }).slice('{"progressToken":'.length, -1);
        expect(exactValue(written)).toBe(exactValue(text));
        if (text.startsWith('-') && exactValue(text) === 0n) expect(written).toBe('-0');
      }),
    );
  });

  it('names the field and the reason for a progress token that is neither a string nor a number', () => {
    expect(refuseLine(request('4', 'true'))).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: {
        code: -32600,
        message: expect.stringMatching(/^Invalid Request: params\._meta\.progressToken: /),
      },
    });
  });

  it('refuses the id of the new user’s report, 1.5, 1e-400 and 1000.00000000000001, and accepts 12345678901234567890', () => {
    for (const id of ['1.5', '1e-400', '1000.00000000000001'])
      expect(refuseLine(request(id))?.error.message).toMatch(
        new RegExp(`got ${id.replace('.', '\\.')}: a number id`),
      );
    expect(refuseLine(request('12345678901234567890', '12345678901234567890'))).toBeUndefined();
  });
});
