import { recordable } from '@callgate/core/json';
import { isCallgateError } from '@callgate/protocol';
import fc from 'fast-check';
import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { decodeAnswer, encodeBody } from './json.js';

function refusal(run: () => unknown): { kind: string; path: unknown; message: string } {
  try {
    run();
  } catch (error) {
    if (!isCallgateError(error)) throw error;
    return { kind: error.kind, path: error.details.path, message: error.message };
  }
  throw new Error('not refused');
}

describe('encodeBody', () => {
  it('writes integers with every digit and -0 as -0', () => {
    expect(
      encodeBody({ a: 12345678901234567890n, b: new LosslessNumber('-98765432109876543210'), c: -0 }),
    ).toBe('{"a":12345678901234567890,"b":-98765432109876543210,"c":-0}');
  });

  it('leaves out undefined fields and writes what toJSON returns, as JSON.stringify does', () => {
    const at = new Date(Date.UTC(2026, 0, 2));
    const body = { at, none: undefined, list: [1, 'two', null, true] };
    expect(encodeBody(body)).toBe(JSON.stringify(body));
  });

  it.each([
    ['NaN', { calls: [{ tool: 't', arguments: { x: Number.NaN } }] }, 'body.calls[0].arguments.x'],
    ['Infinity', { reason: Number.POSITIVE_INFINITY }, 'body.reason'],
    ['a lone surrogate in a value', { labels: { a: 'x\ud800' } }, 'body.labels.a'],
    ['a lone surrogate in a key', { labels: { 'k\udc00': 'v' } }, 'body.labels["k\\udc00"]'],
    ['undefined in an array', { calls: [undefined] }, 'body.calls[0]'],
    ['a function', { reason: () => 1 }, 'body.reason'],
    ['a Map', { arguments: new Map([[1, 2]]) }, 'body.arguments'],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is refused
    ['a hole', { list: [1, , 3] }, 'body.list[1]'],
  ])('refuses %s before sending, naming the path', (_, body, path) => {
    expect(refusal(() => encodeBody(body))).toMatchObject({ kind: 'request-invalid', path });
  });

  it('refuses a cycle but writes a value repeated side by side', () => {
    const shared = { a: 1 };
    expect(encodeBody({ x: shared, y: shared })).toBe('{"x":{"a":1},"y":{"a":1}}');
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { again: cyclic };
    expect(refusal(() => encodeBody({ arguments: cyclic }))).toMatchObject({
      path: 'body.arguments.self.again',
    });
  });

  it('normalises a result that holds itself, and never takes a value repeated beside it for a cycle', () => {
    const shared = { note: 'same' };
    const cyclic: Record<string, unknown> = { shared, score: Number.NaN };
    cyclic.self = cyclic;
    const body = {
      outcomes: [
        { call_id: 'a', outcome: 'ok', result: cyclic },
        { call_id: 'b', outcome: 'ok', result: shared },
      ],
    };
    const sent = JSON.parse(encodeBody(body));
    expect(sent.outcomes[0].result).toEqual(recordable(cyclic).value);
    expect(sent.outcomes[0].result.reasons).toEqual(['non-finite-number', 'not-json']);
    expect(sent.outcomes[1].result).toEqual(shared);
  });

  it('sends the callgate-normalize/1 marker for a result or content with no JSON form', () => {
    const result = { score: Number.NaN, text: 'a\ud800' };
    const marker = recordable(result).value;
    expect(JSON.parse(encodeBody({ call_id: 'c', outcome: 'ok', result }))).toEqual({
      call_id: 'c',
      outcome: 'ok',
      result: marker,
    });
    expect(
      JSON.parse(encodeBody({ outcomes: [{ call_id: 'c', outcome: 'ok', result }] })).outcomes[0].result,
    ).toEqual(marker);
    expect(
      JSON.parse(encodeBody({ calls: [], message: { role: 'assistant', content: result } })).message,
    ).toEqual({
      role: 'assistant',
      content: marker,
    });
    // Big integers alone keep their digits: the server normalises them itself.
    expect(encodeBody({ result: 2n ** 64n })).toBe('{"result":18446744073709551616}');
    // Elsewhere the same value is refused.
    expect(refusal(() => encodeBody({ reason: result })).path).toBe('body.reason.score');
  });
});

describe('decodeAnswer', () => {
  it('keeps big integers as bigint and the rest as numbers', () => {
    expect(decodeAnswer('{"a":12345678901234567890,"b":1.5,"c":-0,"d":9007199254740991,"e":1e300}')).toEqual({
      a: 12345678901234567890n,
      b: 1.5,
      c: -0,
      d: 9007199254740991,
      e: 1e300,
    });
    expect(decodeAnswer('')).toBeUndefined();
  });

  it.each([
    ['a duplicate key', '{"a":1,"a":2}'],
    ['NaN', '{"a":NaN}'],
    ['a number out of range', '{"a":1e400}'],
    ['a decimal a double rounds', '{"a":1000.00000000000001}'],
    ['a decimal that underflows', '{"a":1e-400}'],
    ['text that is not JSON', '<html>'],
  ])('refuses %s', (_, text) => {
    expect(refusal(() => decodeAnswer(text)).kind).toBe('internal');
  });

  it('reads back what encodeBody wrote, for any JSON value with big integers (generated)', () => {
    const leaf = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      // An integer a double holds only approximately reads back as a bigint: left to the bigint leaf.
      fc
        .double({ noNaN: true, noDefaultInfinity: true })
        .filter((number) => !Number.isInteger(number) || Number.isSafeInteger(number)),
      fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }).filter((n) => n < -(2n ** 53n) || n > 2n ** 53n),
      fc.string(),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('node')),
        fc.dictionary(
          fc.string().filter((key) => key !== '__proto__'),
          tie('node'),
        ),
      ),
    })).node;
    fc.assert(
      fc.property(value, (input) => {
        expect(decodeAnswer(encodeBody(input))).toEqual(input);
      }),
    );
  });
});
