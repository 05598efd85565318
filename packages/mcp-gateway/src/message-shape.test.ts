import { CallToolRequestSchema, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainJsonRpcMessage, isPlainToolCall } from './message-shape.js';

const member = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined, freq: 3 });
const loose = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 3 }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.constantFrom('a', '_meta', 'progressToken'), fc.jsonValue(), { maxKeys: 2 }),
  fc.constant(new Date(0)),
);
const params = fc.oneof(
  loose,
  fc.record(
    {
      name: fc.oneof(fc.string({ maxLength: 3 }), loose),
      arguments: fc.oneof(fc.dictionary(fc.string({ maxLength: 2 }), fc.jsonValue(), { maxKeys: 2 }), loose),
      _meta: loose,
      task: loose,
      other: loose,
    },
    { requiredKeys: [] },
  ),
);
const version = fc.constantFrom<unknown>('2.0', '2.0', '2.0', '1.0', 2);
const id = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.double(), fc.constant(2 ** 53), loose);
const method = fc.oneof(fc.constantFrom('tools/call', 'ping', 'notifications/initialized'), loose);
const noise = fc.oneof(
  { arbitrary: fc.constant({}), weight: 3 },
  { arbitrary: fc.record({ extra: loose, result: loose, error: loose }, { requiredKeys: [] }), weight: 1 },
);
/** Mostly well-formed requests, notifications and results, with a member gone or added at times. */
const message = fc
  .oneof(
    fc.tuple(fc.record({ jsonrpc: version, id, method, params: member(params) }), noise),
    fc.tuple(fc.record({ jsonrpc: version, method, params: member(params) }), noise),
    fc.tuple(
      fc.record({
        jsonrpc: version,
        id,
        result: fc.oneof(loose, fc.record({ content: fc.array(fc.jsonValue(), { maxLength: 2 }) })),
      }),
      noise,
    ),
  )
  .map(([base, extra]) => {
    const value: Record<string, unknown> = { ...base };
    Object.assign(value, extra);
    for (const name of Object.keys(value)) if (value[name] === undefined) delete value[name];
    return value;
  });
const anything = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '2.0', '2.0', '1.0', 2),
    id: fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.double(), fc.constant(2 ** 53), loose),
    method: fc.oneof(fc.constantFrom('tools/call', 'ping', 'notifications/initialized'), loose),
    params,
    result: fc.oneof(loose, fc.record({ content: fc.array(fc.jsonValue(), { maxLength: 2 }) })),
    error: fc.record({ code: fc.integer(), message: fc.string() }),
    extra: loose,
  },
  { requiredKeys: [] },
);

describe('plain message shapes', () => {
  it('accept only what the SDK schemas accept', () => {
    let plain = 0;
    fc.assert(
      fc.property(fc.oneof(message, message, anything), (value) => {
        if (isPlainJsonRpcMessage(value)) {
          plain++;
          expect(JSONRPCMessageSchema.safeParse(value).success).toBe(true);
        }
        if (isPlainToolCall(value)) expect(CallToolRequestSchema.safeParse(value).success).toBe(true);
      }),
      { numRuns: 5_000 },
    );
    expect(plain).toBeGreaterThan(50);
  });

  it('take the usual request, notification and result', () => {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'echo', arguments: { a: 1 } },
    };
    expect(isPlainJsonRpcMessage(call)).toBe(true);
    expect(isPlainToolCall(call)).toBe(true);
    expect(isPlainJsonRpcMessage({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(true);
    expect(isPlainJsonRpcMessage({ jsonrpc: '2.0', id: 'a', result: { content: [] } })).toBe(true);
    expect(isPlainJsonRpcMessage({ jsonrpc: '2.0', id: 1.5, method: 'ping' })).toBe(false);
    expect(isPlainToolCall({ ...call, params: { name: 'echo', arguments: '{}' } })).toBe(false);
  });
});
