// The adapter scenario table (test/conformance/scenarios.ts) run against the Vercel AI SDK with
// its own MockLanguageModelV4: generateText, streamText, the SDK's approval parts. Node 22.
import {
  generateText,
  jsonSchema,
  type ModelMessage,
  stepCountIs,
  streamText,
  type Tool,
  type ToolSet,
  tool,
} from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
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
import { type AiSdkGate, createAiSdkGate } from './index.js';

type Prompt = Parameters<MockLanguageModelV4['doGenerate']>[0]['prompt'];

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** What the model read as each result of its previous turn's calls, from the prompt it received. */
function sawInPrompt(prompt: Prompt, calls: number): ModelSaw[] {
  const lastAssistant = prompt.findLastIndex((message) => message.role === 'assistant');
  const assistant = prompt[lastAssistant];
  const asked =
    assistant && Array.isArray(assistant.content)
      ? assistant.content.filter((part) => part.type === 'tool-call')
      : [];
  expect(asked, 'the history repeats the turn’s calls').toHaveLength(calls);
  const results = prompt
    .slice(lastAssistant + 1)
    .flatMap((message) => (message.role === 'tool' ? message.content : []))
    .filter((part) => part.type === 'tool-result');
  expect(results, 'one tool result per call id').toHaveLength(calls);
  return asked.map((call, index) => {
    const sameId = results.filter(
      (result) => result.toolCallId === (call as { toolCallId: string }).toolCallId,
    );
    const result = call.toolCallId === '' ? results[index] : sameId[0];
    if (call.toolCallId !== '') expect(sameId, `one result for ${call.toolCallId}`).toHaveLength(1);
    const output = result?.output as { type: string; value?: unknown; reason?: string } | undefined;
    if (output?.type === 'execution-denied') return classify(output.reason);
    if (output?.type === 'error-text' || output?.type === 'error-json') return classify(output.value, true);
    return classify(output?.value);
  });
}

/** A MockLanguageModelV4 that plays `turns`, then answers `done`; records what it read. */
function scriptedModel(turns: Turn[]) {
  const saw: ModelSaw[] = [];
  let next = 0;
  const play = (prompt: Prompt) => {
    const previous = turns[next - 1];
    if (previous && 'calls' in previous) saw.push(...sawInPrompt(prompt, previous.calls.length));
    const turn = turns[next++] ?? { text: 'done' };
    return turn;
  };
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const turn = play(prompt);
      if ('text' in turn) {
        return {
          content: [{ type: 'text', text: turn.text }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      }
      return {
        content: turn.calls.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.id ?? '',
          toolName: call.tool,
          input: call.arguments,
        })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
    doStream: async ({ prompt }) => {
      const turn = play(prompt);
      const parts =
        'text' in turn
          ? [
              { type: 'text-start' as const, id: 't' },
              { type: 'text-delta' as const, id: 't', delta: turn.text },
              { type: 'text-end' as const, id: 't' },
            ]
          : turn.calls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id ?? '',
              toolName: call.tool,
              input: call.arguments,
            }));
      const finishReason =
        'text' in turn
          ? { unified: 'stop' as const, raw: 'stop' }
          : { unified: 'tool-calls' as const, raw: 'tool_calls' };
      return {
        stream: convertArrayToReadableStream([
          { type: 'stream-start' as const, warnings: [] },
          ...parts,
          { type: 'finish' as const, finishReason, usage },
        ]),
      };
    },
  });
  return { model, saw };
}

function conformanceTools(
  world: ConformanceWorld,
  gate: AiSdkGate,
  subagent: Turn[] | undefined,
  innerSaw: ModelSaw[],
): ToolSet {
  const tools: Record<string, Tool> = {};
  for (const spec of TOOLS) {
    if (spec.name === 'researcher') continue;
    tools[spec.name] = tool({
      description: spec.description,
      inputSchema: jsonSchema<Record<string, unknown>>(spec.inputSchema),
      execute: async (input) => world.execute(spec.name, input),
    });
  }
  const inner = { ...tools };
  tools.researcher = tool({
    description: 'Ask the research agent a question.',
    inputSchema: jsonSchema<{ question: string }>(
      TOOLS.find((spec) => spec.name === 'researcher')?.inputSchema ?? {},
    ),
    execute: async ({ question }) => {
      const { model, saw } = scriptedModel(subagent ?? []);
      // Subagents cannot use the SDK's approval parts: asks wait for callgate's answer in place.
      const result = await generateText({
        model: gate.model(model),
        prompt: question,
        stopWhen: stepCountIs(10),
        ...gate.settings(inner, { approvals: 'wait' }),
      });
      innerSaw.push(...saw);
      return result.text;
    },
  });
  return tools;
}

async function runScenario(scenario: Scenario, mode: Mode) {
  const world = await conformanceWorld(scenario, mode);
  try {
    const gate = await createAiSdkGate({
      governor: world.governor,
      approvalWaitMs: 2_000,
    });
    const innerSaw: ModelSaw[] = [];
    const tools = conformanceTools(world, gate, scenario.subagent, innerSaw);
    const { model, saw } = scriptedModel(scenario.turns);
    const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
    for (let round = 0; round < 4; round++) {
      const settings = {
        model: gate.model(model),
        messages,
        stopWhen: stepCountIs(10),
        ...gate.settings(tools),
      };
      let responseMessages: ModelMessage[];
      let content: readonly unknown[];
      if (scenario.streaming) {
        const result = streamText(settings);
        const parts: string[] = [];
        for await (const part of result.fullStream) parts.push(part.type);
        expect(parts).toContain('tool-call');
        responseMessages = (await result.response).messages;
        content = await result.content;
      } else {
        const result = await generateText(settings);
        responseMessages = result.response.messages;
        content = result.content;
      }
      messages.push(...responseMessages);
      if (scenario.reviewer === 'in-app') {
        // The person approves in the chat app (useChat's addToolApprovalResponse); the route
        // handler forwards the answers to callgate with the person's reviewer key.
        const requests = content.filter(
          (part): part is { type: 'tool-approval-request'; approvalId: string } =>
            (part as { type?: string }).type === 'tool-approval-request',
        );
        if (requests.length === 0) break;
        messages.push({
          role: 'tool',
          content: requests.map((part) => ({
            type: 'tool-approval-response' as const,
            approvalId: part.approvalId,
            approved: true,
          })),
        });
        const forwarded = await gate.forwardApprovalResponses(messages, { reviewer: world.reviewer });
        expect(forwarded).toHaveLength(requests.length);
        continue;
      }
      const responses = await gate.approvalResponses(content);
      if (responses.length === 0) break;
      messages.push({ role: 'tool', content: responses });
    }
    await gate.end();
    await checkScenario('ai-sdk', scenario, world, { runId: gate.runId, saw: [...saw, ...innerSaw] });
  } finally {
    await world.close();
  }
}

for (const mode of MODES) {
  describe(`conformance: ai-sdk (${mode})`, () => {
    for (const scenario of SCENARIOS) {
      const unsupported = scenario.frameworks?.['ai-sdk']?.unsupported;
      if (unsupported) it.skip(`${scenario.id} — cannot express: ${unsupported}`, () => {});
      else it(scenario.id, () => runScenario(scenario, mode));
    }
  });
}
