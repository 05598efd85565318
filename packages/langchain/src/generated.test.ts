// Generated whole runs (test/conformance/generated/runs.ts) played through the real LangChain.js
// createAgent (invoke and stream, with its fakeModel) behind callgate's middleware, on one engine
// for the pass; each run checked from outside.
import { type BaseMessage, fakeModel } from '@langchain/core/testing';
import fc from 'fast-check';
import { AIMessage, createAgent, ToolMessage, tool } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdapterWorld,
  adapterWorld,
  type ModelCall,
} from '../../../test/conformance/generated/adapter-world.js';
import { Tally } from '../../../test/conformance/generated/checks.js';
import {
  argumentsOf,
  EXAMPLES,
  GENERATED_TOOLS,
  type GeneratedRun,
  runArbitrary,
  runCount,
  runSeed,
} from '../../../test/conformance/generated/runs.js';
import { callgateMiddleware } from './index.js';

/**
 * A step's calls as a LangChain chat model gives them: parsed arguments as objects (holding a
 * lone surrogate or NaN as generated), JSON text (and big integers, whose digits a parse would
 * round) as the text itself, text that does not parse as an invalid tool call.
 */
function aiMessage(calls: ModelCall[]): AIMessage {
  const tool_calls: { id?: string; name: string; args: Record<string, unknown>; type: 'tool_call' }[] = [];
  const invalid_tool_calls: {
    id?: string;
    name: string;
    args: string;
    error: string;
    type: 'invalid_tool_call';
  }[] = [];
  for (const call of calls) {
    const id = call.id === undefined ? {} : { id: call.id };
    const { value } = argumentsOf(call.call, call.index);
    if (call.call.arguments === 'invalid-text') {
      invalid_tool_calls.push({
        ...id,
        name: call.tool,
        args: call.text,
        error: 'not JSON',
        type: 'invalid_tool_call',
      });
      continue;
    }
    tool_calls.push({ ...id, name: call.tool, args: value as Record<string, unknown>, type: 'tool_call' });
  }
  return new AIMessage({ content: '', tool_calls, invalid_tool_calls });
}

/** The tool results the messages hold after the model's last calls. */
function resultsIn(messages: BaseMessage[]): Array<{ call_id: string }> {
  const lastAi = messages.findLastIndex((message) => AIMessage.isInstance(message));
  return messages
    .slice(lastAi + 1)
    .filter((message) => ToolMessage.isInstance(message))
    .map((message) => ({ call_id: (message as ToolMessage).tool_call_id }));
}

function scriptedModel(steps: ModelCall[][], results: Array<Array<{ call_id: string }>>) {
  const model = fakeModel();
  steps.forEach((calls, index) => {
    model.respond((messages) => {
      if (index > 0) results.push(resultsIn(messages));
      return aiMessage(calls);
    });
  });
  model.respond((messages) => {
    if (steps.length > 0) results.push(resultsIn(messages));
    return new AIMessage('done');
  });
  return model;
}

async function runThroughLangChain(world: AdapterWorld, run: GeneratedRun, streaming: boolean, tally: Tally) {
  const state = world.runState(run);
  const middleware = callgateMiddleware({ governor: world.governor, approvalWaitMs: 20 });
  const tools = GENERATED_TOOLS.map((spec) =>
    tool(
      async (input: Record<string, unknown>, config) => {
        // A LangChain tool answers with text: a lone surrogate travels in it raw.
        const result = await state.execute(String(config.toolCall?.id ?? ''), input);
        const text = (result as { text?: unknown }).text;
        if (typeof text === 'string') return text;
        return JSON.stringify(result, (_key, value) =>
          typeof value === 'bigint' ? value.toString() : value,
        );
      },
      { name: spec.name, description: spec.name, schema: spec.inputSchema },
    ),
  );
  const model = scriptedModel(state.steps, state.results);
  const agent = createAgent({ model, tools, middleware: [middleware] });
  const input = { messages: [{ role: 'user', content: 'go' }] };
  let final: { messages: BaseMessage[]; callgateRunId?: string } | undefined;
  const config = { recursionLimit: 100 };
  try {
    if (streaming) {
      for await (const value of await agent.stream(input, { ...config, streamMode: 'values' }))
        final = value as typeof final;
    } else {
      final = (await agent.invoke(input, config)) as typeof final;
    }
  } catch (error) {
    // A tool that throws fails the invocation (the middleware records the error, then rethrows,
    // as LangChain does without callgate; several at once as an AggregateError); the app ends
    // the run `failed`.
    const errors = error instanceof AggregateError ? error.errors : [error];
    if (!errors.every((each) => /^the tool (failed|hung)/.test((each as Error).message))) throw error;
    const runId = world.lastRunId();
    await state.check(runId, () => world.governor.endRun(runId, 'failed'), tally, { failed: true });
    return;
  }
  expect(final?.messages.at(-1)?.content).toBe('done');
  // The middleware ends the run in its afterAgent hook.
  await state.check(final?.callgateRunId as string, async () => {}, tally);
}

describe('generated runs through the LangChain adapter', () => {
  let world: AdapterWorld;
  beforeAll(async () => {
    world = await adapterWorld('langchain');
  });
  afterAll(() => world.close());

  it(
    'hold every invariant of the record (invoke and stream)',
    async () => {
      const tally = new Tally('langchain');
      await fc.assert(
        fc.asyncProperty(runArbitrary, fc.boolean(), (run, streaming) =>
          runThroughLangChain(world, run, streaming, tally),
        ),
        {
          numRuns: runCount(300),
          seed: runSeed(),
          examples: EXAMPLES.map(([run]) => [run, false] as [GeneratedRun, boolean]),
        },
      );
      console.log(`langchain: ${tally}`);
      expect(tally.runs).toBeGreaterThanOrEqual(runCount(300));
    },
    Math.max(600_000, runCount(300) * 1_000),
  );
});
