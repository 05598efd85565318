// Generated whole runs (test/conformance/generated/runs.ts) played through the real OpenAI Agents
// JS (run() and streamed runs with its ScriptedModel, interruptions serialised to a RunState and
// settled from callgate) on one engine for the pass; each run checked from outside. Node 22.
import {
  Agent,
  type AgentInputItem,
  type RunResult,
  RunState,
  run,
  setTracingDisabled,
} from '@openai/agents';
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from '@openai/agents-core/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdapterWorld,
  adapterWorld,
  type Inexpressible,
  type ModelCall,
  Rewrites,
} from '../../../test/conformance/generated/adapter-world.js';
import { Tally } from '../../../test/conformance/generated/checks.js';
import {
  EXAMPLES,
  GENERATED_TOOLS,
  type GeneratedRun,
  runArbitrary,
  runCount,
  runSeed,
} from '../../../test/conformance/generated/runs.js';
import { createAgentsGate } from './index.js';

setTracingDisabled(true);

/**
 * What the Agents SDK cannot carry: it fails the whole run (ModelBehaviorError) before any tool
 * hook sees the call (scenarios `empty-call-id`, `reused-call-id`, `repeated-call-ids-one-step`,
 * `unknown-tool` show it), and a function_call item always has a callId.
 */
const AGENTS_CANNOT: Inexpressible[] = [
  {
    reason: 'a call id missing, empty, repeated in its step or reused: the SDK fails the run',
    applies: (call) => call.id !== 'fresh',
    instead: (call) => ({ ...call, id: 'fresh' }),
  },
  {
    reason: 'a call to a tool the agent does not have: the SDK fails the run',
    applies: (call) => call.tool === 'unknown',
    instead: (call) => ({ ...call, tool: 'wipe' }),
  },
  {
    reason:
      'a decimal a double does not hold: the SDK JSON.parses the arguments (rounding it) before needsApproval, the first hook',
    applies: (call) => call.arguments === 'inexact-decimal',
    instead: (call) => ({ ...call, arguments: 'object' }),
  },
];

type Item = AgentInputItem & { type?: string; callId?: string };

/** A scripted model playing `steps` (then `done`), recording the results each next request holds. */
function scriptedModel(steps: ModelCall[][], results: Array<Array<{ call_id: string }>>) {
  let next = 0;
  const respond = modelResponder(({ request }) => {
    const previous = steps[next - 1];
    if (previous) {
      const input = request.input as Item[];
      results.push(
        previous.flatMap((call) => {
          const asked = input.findLastIndex(
            (item) => item.type === 'function_call' && item.callId === call.id,
          );
          return input
            .slice(asked + 1)
            .filter((item) => item.type === 'function_call_result' && item.callId === call.id)
            .map(() => ({ call_id: call.id as string }));
        }),
      );
    }
    const calls = steps[next++];
    if (!calls) return [assistantMessage('done')];
    return calls.map((call) => functionCall(call.tool, call.text, { callId: call.id ?? '' }));
  });
  return new ScriptedModel(Array.from({ length: steps.length + 1 }, () => respond));
}

async function runThroughAgents(
  world: AdapterWorld,
  generated: GeneratedRun,
  streaming: boolean,
  tally: Tally,
) {
  const state = world.runState(generated, { bigint: false });
  const gate = createAgentsGate({ governor: world.governor, approvalWaitMs: 20 });
  const tools = GENERATED_TOOLS.map((spec) =>
    gate.tool({
      name: spec.name,
      description: spec.name,
      parameters: spec.inputSchema as never,
      strict: false,
      execute: async (input: unknown, _context, details) =>
        state.execute(details?.toolCall?.callId ?? '', input),
    }),
  );
  const agent = gate.agent(
    new Agent({
      name: 'assistant',
      instructions: 'Help.',
      model: scriptedModel(state.steps, state.results),
      tools,
    }),
  );
  const context = await gate.begin({ user: 'generated' });
  const runId = context.callgate.run_id;
  const play = async (
    input: string | RunState<unknown, typeof agent>,
  ): Promise<RunResult<unknown, typeof agent>> => {
    const options = { ...(typeof input === 'string' ? { context } : {}), ...gate.runOptions() };
    if (!streaming) return run(agent, input, { ...options, maxTurns: 20 });
    const streamed = await run(agent, input, { ...options, maxTurns: 20, stream: true });
    for await (const _event of streamed);
    await streamed.completed;
    return streamed as unknown as RunResult<unknown, typeof agent>;
  };
  let result = await play('go');
  for (let round = 0; round <= state.steps.length && result.interruptions.length > 0; round++) {
    const restored = await RunState.fromString(agent, result.state.toString());
    await gate.settle(restored);
    result = await play(restored);
  }
  expect(result.finalOutput).toBe('done');
  await state.check(runId, () => gate.finish(result), tally);
}

describe('generated runs through the OpenAI Agents adapter', () => {
  let world: AdapterWorld;
  beforeAll(async () => {
    world = await adapterWorld('openai-agents');
  });
  afterAll(() => world.close());

  it(
    'hold every invariant of the record (run() and streamed runs)',
    async () => {
      const tally = new Tally('openai-agents');
      const rewrites = new Rewrites(AGENTS_CANNOT);
      await fc.assert(
        fc.asyncProperty(runArbitrary, fc.boolean(), (run, streaming) =>
          runThroughAgents(world, rewrites.apply(run), streaming, tally),
        ),
        {
          numRuns: runCount(300),
          seed: runSeed(),
          examples: EXAMPLES.map(([run]) => [run, false] as [GeneratedRun, boolean]),
        },
      );
      console.log(`openai-agents: ${tally}; played as their nearest expressible form: ${rewrites}`);
      expect(tally.runs).toBeGreaterThanOrEqual(runCount(300));
      expect(tally.refusals).toBeGreaterThan(0);
    },
    Math.max(600_000, runCount(300) * 1_000),
  );
});
