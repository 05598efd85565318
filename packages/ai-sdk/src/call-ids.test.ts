// Generated steps of calls whose ids are empty, repeated or distinct, run through generateText
// with the gate's model middleware: every call runs exactly once, gets exactly one result in
// the prompt the next model call reads, under an id of its own; ids the model gave once keep
// their name, and the ledger records each call once (minted where the id could not be kept).

import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conformanceWorld } from '../../../test/conformance/world.js';
import { createAiSdkGate } from './index.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** Ids a model may give a step's calls: empty ones, and a few names that repeat. */
const stepIds = fc.array(fc.constantFrom('', 'a', 'b', 'c'), { minLength: 1, maxLength: 5 });

describe('@callgate/ai-sdk call ids of a step (generated)', () => {
  it('gives each call one result under an id of its own', async () => {
    await fc.assert(
      fc.asyncProperty(stepIds, async (ids) => {
        const world = await conformanceWorld({});
        try {
          let turn = 0;
          const model = new MockLanguageModelV4({
            doGenerate: async () =>
              turn++ === 0
                ? {
                    content: ids.map((id, index) => ({
                      type: 'tool-call' as const,
                      toolCallId: id,
                      toolName: 'read_file',
                      input: JSON.stringify({ path: `f${index}.txt` }),
                    })),
                    finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
                    usage,
                    warnings: [],
                  }
                : {
                    content: [{ type: 'text' as const, text: 'done' }],
                    finishReason: { unified: 'stop' as const, raw: 'stop' },
                    usage,
                    warnings: [],
                  },
          });
          const gate = await createAiSdkGate({ governor: world.governor });
          const readFile = tool({
            inputSchema: jsonSchema<{ path: string }>({
              type: 'object',
              properties: { path: { type: 'string' } },
              required: ['path'],
            }),
            execute: async (input) => world.execute('read_file', input),
          });
          await generateText({
            model: gate.model(model),
            prompt: 'go',
            stopWhen: stepCountIs(3),
            ...gate.settings({ read_file: readFile }),
          });
          await gate.end();

          // Each call ran once, with its own arguments.
          expect(world.executions.map((execution) => execution.arguments.path).sort()).toEqual(
            ids.map((_id, index) => `f${index}.txt`).sort(),
          );
          // The next model call read one result per call, each under a distinct, non-empty id.
          const prompt = model.doGenerateCalls[1]?.prompt ?? [];
          const asked = prompt.flatMap((message) =>
            message.role === 'assistant' && Array.isArray(message.content)
              ? message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId)
              : [],
          );
          const answered = prompt.flatMap((message) =>
            message.role === 'tool'
              ? message.content.filter((part) => part.type === 'tool-result').map((part) => part.toolCallId)
              : [],
          );
          expect(new Set(asked).size).toBe(ids.length);
          expect(asked).not.toContain('');
          expect([...answered].sort()).toEqual([...asked].sort());
          // A name the model gave first keeps it; every other call has a minted id.
          const firsts = ids.filter((id, index) => id !== '' && ids.indexOf(id) === index);
          expect(asked.filter((id) => !id.startsWith('cg-')).sort()).toEqual([...firsts].sort());
          const decisions = (await world.records(gate.runId)).filter(
            (record) => record.type === 'call-decision',
          );
          expect(decisions).toHaveLength(ids.length);
          expect(decisions.filter((record) => record.minted)).toHaveLength(ids.length - firsts.length);
        } finally {
          await world.close();
        }
      }),
      { numRuns: 25 },
    );
  });
});
