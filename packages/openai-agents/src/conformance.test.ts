// The adapter scenario table (test/conformance/scenarios.ts) run against OpenAI Agents JS with its
// own ScriptedModel (@openai/agents-core/testing): run(), streamed runs, interruptions, and a
// RunState serialised and restored between the interruption and the resumed run. Node 22.
import {
  Agent,
  type AgentInputItem,
  type RunResult,
  RunState,
  run,
  setTracingDisabled,
} from '@openai/agents';
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from '@openai/agents-core/testing';
import { describe, expect, it } from 'vitest';
import { checkScenario, classify } from '../../../test/conformance/check.js';
import { type ModelSaw, SCENARIOS, type Scenario, type Turn } from '../../../test/conformance/scenarios.js';
import {
  type ConformanceWorld,
  conformanceWorld,
  MODES,
  type Mode,
  TOOLS,
} from '../../../test/conformance/world.js';
import { type AgentsGate, createAgentsGate } from './index.js';

setTracingDisabled(true);

/** What the SDK itself tells the model about a call it refused or could not read. */
const SDK_MESSAGES = ['Tool execution was not approved.', 'An error occurred while parsing tool arguments'];

type Item = AgentInputItem & { type?: string; callId?: string; output?: unknown };

/** What the model read as each result of its previous turn's calls, from the input it received. */
function sawInInput(input: Item[], calls: Extract<Turn, { calls: unknown }>['calls']): ModelSaw[] {
  return calls.map((call) => {
    const asked = input.findLastIndex((item) => item.type === 'function_call' && item.callId === call.id);
    expect(asked, `the history repeats call ${call.id}`).toBeGreaterThanOrEqual(0);
    const results = input
      .slice(asked + 1)
      .filter((item) => item.type === 'function_call_result' && item.callId === call.id);
    expect(results, `one result for call ${call.id}`).toHaveLength(1);
    const output = results[0]?.output as { type?: string; text?: string } | string | undefined;
    const text = typeof output === 'string' ? output : output?.text;
    const saw = classify(
      text,
      SDK_MESSAGES.some((message) => text?.startsWith(message)),
    );
    // A call that did not run reads as one: the Responses API's status for it is `incomplete`.
    const status = (results[0] as { status?: string } | undefined)?.status;
    if (saw !== 'result') expect(status, `the status of refused call ${call.id}`).not.toBe('completed');
    return saw;
  });
}

/** A ScriptedModel that plays `turns`, then answers `done`; records what it read. */
function scriptedModel(turns: Turn[]) {
  const saw: ModelSaw[] = [];
  let next = 0;
  const respond = modelResponder(({ request }) => {
    const previous = turns[next - 1];
    if (previous && 'calls' in previous) saw.push(...sawInInput(request.input as Item[], previous.calls));
    const turn = turns[next++] ?? { text: 'done' };
    if ('text' in turn) return [assistantMessage(turn.text)];
    return turn.calls.map((call) => functionCall(call.tool, call.arguments, { callId: call.id ?? '' }));
  });
  return { model: new ScriptedModel(Array.from({ length: turns.length + 1 }, () => respond)), saw };
}

function conformanceAgent(world: ConformanceWorld, gate: AgentsGate, scenario: Scenario) {
  const tools = TOOLS.filter((spec) => spec.name !== 'researcher').map((spec) =>
    gate.tool({
      name: spec.name,
      description: spec.description ?? spec.name,
      parameters: spec.inputSchema as never,
      strict: false,
      execute: async (input: unknown) => world.execute(spec.name, input as Record<string, unknown>),
    }),
  );
  const inner = scriptedModel(scenario.subagent ?? []);
  const researcher = new Agent({
    name: 'researcher-agent',
    instructions: 'Answer from files.',
    model: inner.model,
    tools,
  });
  const researcherSpec = TOOLS.find((spec) => spec.name === 'researcher');
  const researcherTool = gate.agentTool(researcher, {
    toolName: 'researcher',
    toolDescription: researcherSpec?.description ?? 'research',
    parameters: researcherSpec?.inputSchema as never,
    inputBuilder: ({ params }) => String((params as { question?: unknown }).question),
  });
  const outer = scriptedModel(scenario.turns);
  const agent = gate.agent(
    new Agent({
      name: 'assistant',
      instructions: 'Help.',
      model: outer.model,
      tools: [...tools, researcherTool],
    }),
  );
  return { agent, saw: () => [...outer.saw, ...inner.saw] };
}

async function runScenario(scenario: Scenario, mode: Mode) {
  const world = await conformanceWorld(scenario, mode);
  try {
    const gate = createAgentsGate({
      governor: world.governor,
      approvalWaitMs: 2_000,
    });
    const { agent, saw } = conformanceAgent(world, gate, scenario);
    const context = await gate.begin({ user: 'conformance' });
    const runId = context.callgate.run_id;
    const play = async (
      input: string | RunState<unknown, typeof agent>,
    ): Promise<RunResult<unknown, typeof agent>> => {
      const options = {
        ...(typeof input === 'string' ? { context } : {}),
        ...gate.runOptions(),
      };
      if (!scenario.streaming) return run(agent, input, options);
      const streamed = await run(agent, input, {
        ...options,
        stream: true,
      });
      for await (const _event of streamed) {
        // drain the stream: the gate must hold while events flow
      }
      await streamed.completed;
      return streamed as unknown as RunResult<unknown, typeof agent>;
    };
    let result = await play('go');
    for (let round = 0; round < 3 && result.interruptions.length > 0; round++) {
      // Serialise the state at the interruption and resume from the string, as a server would.
      const restored = await RunState.fromString(agent, result.state.toString());
      await gate.settle(restored);
      result = await play(restored);
    }
    expect(result.finalOutput).toBe('done');
    await gate.finish(result);
    await checkScenario('openai-agents', scenario, world, { runId, saw: saw() });
    if (scenario.subagent) {
      // The inner agent's calls are in a child run whose run-start names the outer call.
      const children = (await world.store.listRuns({ limit: 1000 })).filter(
        (run) => run.parent_run_id === runId,
      );
      expect(children).toHaveLength(1);
      const inner = await world.records(children[0]?.run_id as string);
      const outerCall = scenario.turns.flatMap((turn) => ('calls' in turn ? turn.calls : []))[0]?.id;
      expect(inner.find((record) => record.type === 'run-start')).toMatchObject({
        parent_run_id: runId,
        labels: { 'callgate.parent_call_id': outerCall },
      });
      expect(
        inner.filter((record) => record.type === 'call-decision').map((record) => record.call_id),
      ).toEqual(
        scenario.subagent.flatMap((turn) => ('calls' in turn ? turn.calls.map((call) => call.id) : [])),
      );
    }
  } finally {
    await world.close();
  }
}

/** A row the SDK refuses by itself: the run fails with `refusedWith`; no later tool ran. */
async function runRefused(scenario: Scenario, mode: Mode, refusedWith: string, ranBefore = 0) {
  const world = await conformanceWorld(scenario, mode);
  try {
    const gate = createAgentsGate({ governor: world.governor });
    const { agent } = conformanceAgent(world, gate, scenario);
    const context = await gate.begin();
    await expect(run(agent, 'go', { context })).rejects.toThrow(refusedWith);
    expect(world.executions).toHaveLength(ranBefore);
  } finally {
    await world.close();
  }
}

for (const mode of MODES) {
  describe(`conformance: openai-agents (${mode})`, () => {
    for (const scenario of SCENARIOS) {
      const { unsupported, refusedWith, ranBefore } = scenario.frameworks?.['openai-agents'] ?? {};
      if (unsupported && refusedWith) {
        it(`${scenario.id} — cannot express: ${unsupported}`, () =>
          runRefused(scenario, mode, refusedWith, ranBefore));
      } else if (unsupported) it.skip(`${scenario.id} — cannot express: ${unsupported}`, () => {});
      else it(scenario.id, () => runScenario(scenario, mode));
    }
  });
}
