import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forWire, isStandIn, restoreDigits, restoreDigitsIn, withGateIds, writeJson } from './exact-json.js';
import { parseClientJson, parseUpstreamJson } from './json-rpc.js';

/** A number token and how the gateway must write it: a double's own text, or the digits as sent. */
const numberToken = fc
  .oneof(
    fc.integer().map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
    fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
    fc.constantFrom('9007199254740993', '-9007199254740993', '9007199254740992', '1e400', '-1e400'),
    fc.constantFrom('1.0', '1e2', '0.1', '-0', '2e53', '12345678901234567890123'),
  )
  .map((text) => {
    const value = Number(text);
    // -0 too: `JSON.stringify` writes it `0`, the gateway keeps its sign.
    const kept =
      !Number.isFinite(value) ||
      (Number.isInteger(value) && !Number.isSafeInteger(value)) ||
      Object.is(value, -0);
    return { text, written: kept ? text : JSON.stringify(value) };
  });

type Token = { text: string; written: string };
const join = (parts: Token[], open: string, close: string): Token => ({
  text: `${open}${parts.map((part) => part.text).join(',')}${close}`,
  written: `${open}${parts.map((part) => part.written).join(',')}${close}`,
});

/** JSON text with distinct keys, and the text the gateway must write for it. */
const { value: jsonToken } = fc.letrec<{ value: Token }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    numberToken,
    fc
      .string({ maxLength: 6 })
      .map((text) => ({ text: JSON.stringify(text), written: JSON.stringify(text) })),
    fc.constantFrom('true', 'false', 'null').map((text) => ({ text, written: text })),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => join(items, '[', ']')),
    fc
      // Keys that are not array indexes: objects list those first, whatever the text's order.
      .uniqueArray(
        fc.tuple(
          fc.string({ maxLength: 4 }).map((key) => `k${key}`),
          tie('value'),
        ),
        {
          maxLength: 4,
          selector: ([key]) => key,
        },
      )
      .map((members) =>
        join(
          members.map(([key, item]) => ({
            text: `${JSON.stringify(key)}:${item.text}`,
            written: `${JSON.stringify(key)}:${item.written}`,
          })),
          '{',
          '}',
        ),
      ),
  ),
}));

describe('an upstream answer read losslessly and written for the client', () => {
  it('keeps the digits of every number a double cannot hold, and writes the rest as JSON.stringify does', () => {
    fc.assert(
      fc.property(jsonToken, ({ text, written }) => {
        const answer = `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":${text}}}`;
        expect(writeJson(parseUpstreamJson(answer))).toBe(
          `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":${written}}}`,
        );
      }),
    );
  });

  it('refuses a key given twice with different values, wherever it is', () => {
    fc.assert(
      fc.property(jsonToken, fc.string({ maxLength: 4 }), (inner, key) => {
        const text = `{"result":{"a":[{${JSON.stringify(key)}:1,"x":${inner.text},${JSON.stringify(key)}:2}]}}`;
        expect(() => parseUpstreamJson(text)).toThrow(/[Dd]uplicate key/);
      }),
    );
  });

  it('keeps __proto__ as an own key, never a prototype', () => {
    const value = parseUpstreamJson('{"a":1,"b":{"__proto__":{"polluted":12345678901234567890}}}') as {
      b: Record<string, unknown>;
    };
    expect(Object.getPrototypeOf(value.b)).toBe(Object.prototype);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(writeJson(value)).toBe('{"a":1,"b":{"__proto__":{"polluted":12345678901234567890}}}');
  });
});

/** Request ids as raw JSON text: strings, safe integers, integers beyond 2^53. */
const idText = fc.oneof(
  fc.string({ maxLength: 8 }).map((text) => JSON.stringify(text)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }).map(String),
  fc.bigInt({ min: 2n ** 53n, max: 10n ** 30n }).map(String),
  fc.bigInt({ min: -(10n ** 30n), max: -(2n ** 53n) }).map(String),
);

describe('a client request id', () => {
  it('passes the SDK schema as read and is answered with the same JSON text', () => {
    fc.assert(
      fc.property(idText, (id) => {
        const message = withGateIds(
          parseClientJson(
            `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"x"}}`,
            1 << 20,
          ),
        ) as { id: string | number };
        expect(JSONRPCMessageSchema.safeParse(message).success).toBe(true);
        const answer = writeJson({ result: { content: [] }, jsonrpc: '2.0', id: message.id });
        expect(answer).toBe(`{"result":{"content":[]},"jsonrpc":"2.0","id":${id}}`);
        expect(
          restoreDigitsIn(
            Buffer.from(JSON.stringify(forWire(JSON.parse(JSON.stringify({ id: message.id }))))),
          ),
        ).toEqual(Buffer.from(`{"id":${id}}`));
      }),
    );
  });

  it('stands in for a cancelled request id too, so the cancellation finds its request', () => {
    const [request, cancel] = withGateIds(
      parseClientJson(
        '[{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345678901234567890}}]',
        1 << 20,
      ) as unknown[],
    ) as [{ id: unknown }, { params: { requestId: unknown } }];
    expect(isStandIn(request.id)).toBe(true);
    expect(cancel.params.requestId).toBe(request.id);
  });

  it('is never forged by a client string that looks like a stand-in', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.bigInt({ min: 0n, max: 10n ** 25n }), (nonce, digits) => {
        const forged = `\u0000callgate-exact-${nonce}:${digits}`;
        expect(isStandIn(forged)).toBe(false);
        expect(writeJson({ id: forged, text: forged })).toBe(JSON.stringify({ id: forged, text: forged }));
        expect(restoreDigits(JSON.stringify([forged]))).toBe(JSON.stringify([forged]));
      }),
    );
  });
});
