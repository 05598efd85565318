// Test support for the Vercel AI SDK adapter (`@callgate/testing/ai-sdk`; ai 7 needs Node 22): a
// scripted model, the SDK's own MockLanguageModelV4 playing turns of tool calls.
import { MockLanguageModelV4 } from 'ai/test';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A call a scripted model asks for: the SDK's `toolCallId`, `toolName` and `input` (JSON text). */
export interface ScriptedCall {
  id: string;
  tool: string;
  input: string;
}

/** A model that asks for each of `turns`' calls in turn (one turn per step), then answers `text`. */
export function scriptedModel(
  turns: readonly (readonly ScriptedCall[])[],
  text = 'done',
): MockLanguageModelV4 {
  let next = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const calls = turns[next++];
      return calls
        ? {
            content: calls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id,
              toolName: call.tool,
              input: call.input,
            })),
            finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: 'text' as const, text }],
            finishReason: { unified: 'stop' as const, raw: 'stop' },
            usage,
            warnings: [],
          };
    },
  });
}
