import { McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingCalls } from './pending-calls.js';

type Sent = { id?: string; method: string; params?: Record<string, unknown> };

/** A PendingCalls whose `send` records what it was given. */
function calls() {
  const pending = new PendingCalls();
  const sent: Sent[] = [];
  const send = async (message: unknown) => {
    sent.push(message as Sent);
  };
  return { pending, sent, send };
}

const answer = fc.oneof(
  fc.record({ result: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })) }),
  fc.record({
    error: fc.record(
      {
        code: fc.integer({ min: -33_000, max: 1_000 }),
        message: fc.string(),
        data: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ['code', 'message'] },
    ),
  }),
);

describe('PendingCalls', () => {
  it('settles each request with its own response, as the SDK protocol layer reads it, and only that', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { minLength: 1, maxLength: 6 }), async (answers) => {
        const { pending, sent, send } = calls();
        const settled = answers.map((_, index) =>
          pending.start('tools/call', { name: `t${index}` }, { timeoutMs: 60_000 }, send).then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          ),
        );
        const ids = sent.map((message) => message.id as string);
        expect(new Set(ids).size).toBe(answers.length);
        // Not theirs: a numeric id (the MCP client's), an unknown id, a request.
        expect(pending.answer({ jsonrpc: '2.0', id: 1, result: {} })).toBe(false);
        expect(pending.answer({ jsonrpc: '2.0', id: 'callgate-other', result: {} })).toBe(false);
        expect(pending.answer({ jsonrpc: '2.0', id: ids[0] as string, method: 'ping' } as never)).toBe(false);
        // Answered in reverse order; each reaches its own request.
        for (let index = answers.length - 1; index >= 0; index--)
          expect(pending.answer({ jsonrpc: '2.0', id: ids[index], ...answers[index] } as never)).toBe(true);
        const outcomes = await Promise.all(settled);
        outcomes.forEach((outcome, index) => {
          const given = answers[index] as {
            result?: unknown;
            error?: { code: number; message: string; data?: unknown };
          };
          if (given.result) expect(outcome).toEqual({ result: given.result });
          else {
            const expected = McpError.fromError(
              given.error?.code ?? 0,
              given.error?.message ?? '',
              given.error?.data,
            );
            const error = (outcome as { error: McpError }).error;
            expect(error).toBeInstanceOf(McpError);
            expect({ code: error.code, message: error.message, data: error.data }).toEqual({
              code: expected.code,
              message: expected.message,
              data: expected.data,
            });
          }
        });
        expect(pending.answer({ jsonrpc: '2.0', id: ids[0] as string, result: {} })).toBe(false);
      }),
    );
  });

  it('cancels upstream and rejects with the reason when the signal aborts', async () => {
    const { pending, sent, send } = calls();
    const abort = new AbortController();
    const waiting = pending.start('tools/call', {}, { signal: abort.signal, timeoutMs: 60_000 }, send);
    abort.abort('enough');
    await expect(waiting).rejects.toMatchObject({ code: -32001, message: 'MCP error -32001: enough' });
    expect(sent[1]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: sent[0]?.id, reason: 'enough' },
    });
    expect(pending.answer({ jsonrpc: '2.0', id: sent[0]?.id as string, result: {} })).toBe(false);
  });

  it('rejects every request in flight when the transport closes', async () => {
    const { pending, send } = calls();
    const waiting = pending.start('tools/call', {}, { timeoutMs: 60_000 }, send);
    pending.closeAll();
    await expect(waiting).rejects.toMatchObject({ code: -32000 });
  });
});
