import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UPSTREAM_INVALID_JSON } from './json-rpc.js';
import { UPSTREAM_ANSWER_TOO_LARGE } from './stdio-transport.js';
import { isUpstreamAnswer, PassedThroughError } from './upstream-errors.js';

describe('an upstream JSON-RPC error', () => {
  it('is told apart from the SDK’s own failures whatever its code, and passed on as sent', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -32768, max: 32767 }),
        fc.string({ maxLength: 20 }),
        fc.option(fc.jsonValue(), { nil: undefined }),
        (code, message, data) => {
          fc.pre(!(message === 'Connection closed' || message === 'Request timed out'));
          const error = McpError.fromError(code, message, data);
          expect(isUpstreamAnswer(error)).toBe(true);
          const passed = new PassedThroughError(error);
          expect({ code: passed.code, message: passed.message, data: passed.data }).toEqual({
            code,
            message,
            data,
          });
        },
      ),
    );
  });

  it('the new user’s -32000 "boom" with data is the upstream’s; the SDK’s closed connection and time-out, and the gateway’s marks, are not', () => {
    expect(isUpstreamAnswer(new McpError(-32000, 'boom', { big: 1 }))).toBe(true);
    expect(isUpstreamAnswer(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toBe(false);
    expect(
      isUpstreamAnswer(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: 10 })),
    ).toBe(false);
    for (const callgate of [UPSTREAM_INVALID_JSON, UPSTREAM_ANSWER_TOO_LARGE])
      expect(isUpstreamAnswer(new McpError(-32603, 'x', { callgate }))).toBe(false);
    expect(isUpstreamAnswer(new Error('socket hang up'))).toBe(false);
  });
});
