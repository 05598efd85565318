// Generated steps of calls whose ids are empty, repeated or distinct, run through generateText
// with the gate's model middleware: every call runs exactly once, gets exactly one result in
// the prompt the next model call reads, under an id of its own; ids the model gave once keep
// their name, and the ledger records each call once (minted where the id could not be kept).

import { scriptedModel } from '@callgate/testing/ai-sdk';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { convertArrayToReadableStream } from 'ai/test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conformanceWorld } from '../../../test/conformance/world.js';
import { callIdsMiddleware } from './call-ids.js';
import { createAiSdkGate } from './index.js';

/** Ids a model may give a step's calls: empty ones, and a few names that repeat. */
const stepIds = fc.array(fc.constantFrom('', 'a', 'b', 'c'), { minLength: 1, maxLength: 5 });

describe('@callgate/ai-sdk call ids of a step (generated)', () => {
  it('gives each call one result under an id of its own', async () => {
    await fc.assert(
      fc.asyncProperty(stepIds, async (ids) => {
        const world = await conformanceWorld({});
        try {
          const model = scriptedModel([
            ids.map((id, index) => ({
              id,
              tool: 'read_file',
              input: JSON.stringify({ path: `f${index}.txt` }),
            })),
          ]);
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

describe('@callgate/ai-sdk call ids in a stream', () => {
  it("keeps each call's input parts only while their id names one call", async () => {
    let minted = 0;
    const middleware = callIdsMiddleware(async (calls) => calls.map(() => `cg-${++minted}`));
    const parts = [
      { type: 'tool-input-start', id: 'x', toolName: 'read_file' },
      { type: 'tool-input-delta', id: 'x', delta: '{"path":"a"}' },
      { type: 'tool-input-end', id: 'x' },
      { type: 'tool-input-start', id: 'x', toolName: 'read_file' },
      { type: 'tool-input-delta', id: 'x', delta: '{"path":"b"}' },
      { type: 'tool-input-end', id: 'x' },
      { type: 'tool-input-start', id: '', toolName: 'read_file' },
      { type: 'tool-call', toolCallId: 'x', toolName: 'read_file', input: '{"path":"a"}' },
      { type: 'tool-call', toolCallId: 'x', toolName: 'read_file', input: '{"path":"b"}' },
      { type: 'tool-call', toolCallId: '', toolName: 'read_file', input: '{"path":"c"}' },
    ];
    const wrapStream = middleware.wrapStream;
    if (!wrapStream) throw new Error('the middleware has no wrapStream');
    const wrapped = await wrapStream({
      doStream: async () => ({ stream: convertArrayToReadableStream(parts as never[]) }),
      doGenerate: async () => Promise.reject(new Error('not used')),
      params: {} as never,
      model: {} as never,
    });
    const out: { type: string; id?: string; toolCallId?: string }[] = [];
    const reader = wrapped.stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read())
      out.push(next.value as never);
    expect(out.map((part) => `${part.type} ${part.id ?? part.toolCallId}`)).toEqual([
      'tool-input-start x',
      'tool-input-delta x',
      'tool-input-end x',
      'tool-call x',
      'tool-call cg-1',
      'tool-call cg-2',
    ]);
  });
});
