// The adapter scenario table (test/conformance/scenarios.ts) run against LangChain.js createAgent
// with its own fake chat model (fakeModel from @langchain/core/testing): invoke and stream.
import { type BaseMessage, fakeModel } from '@langchain/core/testing';
import { Command, MemorySaver } from '@langchain/langgraph';
import { type AgentMiddleware, AIMessage, createAgent, ToolMessage, tool } from 'langchain';
import { describe, expect, it } from 'vitest';
import { checkScenario, classify } from '../../../test/conformance/check.js';
import {
  type ModelSaw,
  SCENARIOS,
  type Scenario,
  type ScriptedCall,
  type Turn,
} from '../../../test/conformance/scenarios.js';
import {
  type ConformanceWorld,
  conformanceWorld,
  MODES,
  type Mode,
  TOOLS,
} from '../../../test/conformance/world.js';
import { type CallgateInterrupt, callgateMiddleware } from './index.js';

/** What the model read as each result of its previous turn's calls, from the messages it received. */
function sawInMessages(messages: BaseMessage[], calls: ScriptedCall[]): ModelSaw[] {
  const lastAi = messages.findLastIndex((message) => AIMessage.isInstance(message));
  const asked = (messages[lastAi] as AIMessage).tool_calls ?? [];
  expect(asked, 'the history repeats the turn’s calls, each with an id').toHaveLength(calls.length);
  const results = messages.slice(lastAi + 1).filter((message) => ToolMessage.isInstance(message));
  expect(results, 'one tool result per call').toHaveLength(calls.length);
  return asked.map((call) => {
    expect(call.id, 'every call in the history has an id').toBeTruthy();
    const mine = results.filter((result) => result.tool_call_id === call.id);
    expect(mine, `one result for ${call.id}`).toHaveLength(1);
    return classify(mine[0]?.content);
  });
}

/** The scripted call as LangChain carries it: parsed arguments, or an invalid tool call. */
function aiMessage(turn: Extract<Turn, { calls: unknown }>): AIMessage {
  const tool_calls: { id?: string; name: string; args: Record<string, unknown>; type: 'tool_call' }[] = [];
  const invalid_tool_calls: {
    id?: string;
    name: string;
    args: string;
    error: string;
    type: 'invalid_tool_call';
  }[] = [];
  for (const call of turn.calls) {
    const id = call.id === null ? {} : { id: call.id };
    let parsed: unknown;
    try {
      parsed = JSON.parse(call.arguments);
    } catch (error) {
      invalid_tool_calls.push({
        ...id,
        name: call.tool,
        args: call.arguments,
        error: String(error),
        type: 'invalid_tool_call',
      });
      continue;
    }
    tool_calls.push({
      ...id,
      name: call.tool,
      args: (call.asText ? call.arguments : parsed) as Record<string, unknown>,
      type: 'tool_call',
    });
  }
  return new AIMessage({ content: '', tool_calls, invalid_tool_calls });
}

/** A fake chat model that plays `turns`, then answers `done`; records what it read. */
function scriptedModel(turns: Turn[]) {
  const saw: ModelSaw[] = [];
  const model = fakeModel();
  turns.forEach((turn, index) => {
    model.respond((messages) => {
      const previous = turns[index - 1];
      if (previous && 'calls' in previous) saw.push(...sawInMessages(messages, previous.calls));
      return 'calls' in turn ? aiMessage(turn) : new AIMessage(turn.text);
    });
  });
  model.respond((messages) => {
    const previous = turns.at(-1);
    if (previous && 'calls' in previous) saw.push(...sawInMessages(messages, previous.calls));
    return new AIMessage('done');
  });
  return { model, saw };
}

function conformanceTools(world: ConformanceWorld) {
  return TOOLS.filter((spec) => spec.name !== 'researcher').map((spec) =>
    tool(async (input: Record<string, unknown>) => JSON.stringify(world.execute(spec.name, input)), {
      name: spec.name,
      description: spec.description ?? spec.name,
      schema: spec.inputSchema,
    }),
  );
}

async function runScenario(scenario: Scenario, mode: Mode) {
  const world = await conformanceWorld(scenario, mode);
  try {
    // In-app answers: asks pause the graph (a HITLRequest interrupt) and a Command resumes it.
    const inApp = scenario.reviewer === 'in-app';
    const middleware: AgentMiddleware = callgateMiddleware({
      governor: world.governor,
      approvalWaitMs: 2_000,
      ...(inApp ? { approvals: 'interrupt' as const, reviewer: world.reviewer } : {}),
    });
    const tools = conformanceTools(world);
    const inner = scriptedModel(scenario.subagent ?? []);
    const researcherAgent = createAgent({ model: inner.model, tools, middleware: [middleware] });
    const researcherSpec = TOOLS.find((spec) => spec.name === 'researcher');
    const researcher = tool(
      async ({ question }: { question: string }) => {
        const answer = await researcherAgent.invoke({ messages: [{ role: 'user', content: question }] });
        return String(answer.messages.at(-1)?.content ?? '');
      },
      {
        name: 'researcher',
        description: researcherSpec?.description ?? 'research',
        schema: researcherSpec?.inputSchema ?? {},
      },
    );
    const outer = scriptedModel(scenario.turns);
    const agent = createAgent({
      model: outer.model,
      tools: [...tools, researcher],
      middleware: [middleware],
      ...(inApp ? { checkpointer: new MemorySaver() } : {}),
    });
    const input = { messages: [{ role: 'user', content: 'go' }] };
    let final: { messages: BaseMessage[]; callgateRunId?: string };
    if (inApp) {
      const config = { configurable: { thread_id: scenario.id } };
      let state = (await agent.invoke(input, config)) as typeof final & {
        __interrupt__?: { value: CallgateInterrupt }[];
      };
      for (let round = 0; round < 3 && state.__interrupt__?.length; round++) {
        const actions = state.__interrupt__[0]?.value.actionRequests ?? [];
        expect(actions.every((action) => action.approvalId.startsWith('ap-'))).toBe(true);
        const resume = { decisions: actions.map(() => ({ type: 'approve' as const })) };
        state = (await agent.invoke(new Command({ resume }), config)) as typeof state;
      }
      final = state;
    } else if (scenario.streaming) {
      let last: typeof final | undefined;
      let chunks = 0;
      for await (const value of await agent.stream(input, { streamMode: 'values' })) {
        last = value as typeof final;
        chunks++;
      }
      expect(chunks).toBeGreaterThan(2);
      final = last as typeof final;
    } else {
      final = (await agent.invoke(input)) as typeof final;
    }
    expect(final.messages.at(-1)?.content).toBe('done');
    expect(final.callgateRunId).toBeTruthy();
    await checkScenario('langchain', scenario, world, {
      runId: final.callgateRunId as string,
      saw: [...outer.saw, ...inner.saw],
    });
  } finally {
    await world.close();
  }
}

for (const mode of MODES) {
  describe(`conformance: langchain (${mode})`, () => {
    for (const scenario of SCENARIOS) {
      const unsupported = scenario.frameworks?.langchain?.unsupported;
      if (unsupported) it.skip(`${scenario.id} — cannot express: ${unsupported}`, () => {});
      else it(scenario.id, () => runScenario(scenario, mode));
    }
  });
}
