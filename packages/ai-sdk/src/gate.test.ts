// What the scenario table does not cover: approvals resumed by another gate (another request,
// another process), approvals the app forges in the SDK's history, arguments changed after the
// decision, failing closed, tools used without the approval function, and outcomes of failing
// and streaming tools. Node 22.
import { type Governor, localReviewer } from '@callgate/core/adapter';
import { type ScriptedCall, scriptedModel } from '@callgate/testing/ai-sdk';
import { generateText, jsonSchema, type ModelMessage, stepCountIs, type ToolSet, tool } from 'ai';
import type { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConformanceWorld, conformanceWorld, MODES } from '../../../test/conformance/world.js';
import { createAiSdkGate } from './index.js';

/** A model that asks for `calls` once, then answers `done`. */
const model = (calls: ScriptedCall[]) => scriptedModel([calls]);

let world: ConformanceWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function tools(
  target: ConformanceWorld,
  overrides: Partial<Record<string, (input: Record<string, unknown>) => unknown>> = {},
): ToolSet {
  const schema = jsonSchema<Record<string, unknown>>({
    type: 'object',
    properties: { to: { type: 'string' }, amount: { type: 'number' }, path: { type: 'string' } },
  });
  const make = (name: string) =>
    tool({
      inputSchema: schema,
      execute: async (input) => (overrides[name] ? overrides[name]?.(input) : target.execute(name, input)),
    });
  return {
    send_invoice: make('send_invoice'),
    read_file: make('read_file'),
    delete_file: make('delete_file'),
  };
}

const invoice = { id: 'c1', tool: 'send_invoice', input: '{"to":"acme","amount":5000}' };

async function outcomes(target: ConformanceWorld, runId: string) {
  const records = await target.records(runId);
  return records
    .filter((record) => record.type === 'call-end')
    .map((record) => [record.call_id, record.outcome, record.error_kind])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

/** The tool results the model read in its last call, by call id. */
function lastResults(
  m: MockLanguageModelV4,
): Record<string, { type: string; value?: unknown; reason?: string }> {
  const prompt = m.doGenerateCalls.at(-1)?.prompt ?? [];
  const results: Record<string, { type: string; value?: unknown; reason?: string }> = {};
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content)
      if (part.type === 'tool-result') results[part.toolCallId] = part.output as never;
  }
  return results;
}

const kindIn = (output: { reason?: string } | undefined) => JSON.parse(String(output?.reason)).error.kind;

describe('@callgate/ai-sdk approvals through the SDK parts', () => {
  it('binds an approval answered after the request ended to the same call in a new gate', async () => {
    world = await conformanceWorld({ reviewer: 'approve' });
    const first = await createAiSdkGate({ governor: world.governor });
    const messages: ModelMessage[] = [{ role: 'user', content: 'invoice acme' }];
    const m = model([invoice]);
    const asked = await generateText({
      model: m,
      messages,
      stopWhen: stepCountIs(5),
      ...first.settings(tools(world)),
    });
    expect(asked.content.some((part) => part.type === 'tool-approval-request')).toBe(true);
    expect(world.executions).toHaveLength(0);
    // The next request: a new gate on the same run, reading the persisted messages only.
    const history: ModelMessage[] = JSON.parse(JSON.stringify([...messages, ...asked.response.messages]));
    const second = await createAiSdkGate({ governor: world.governor, runId: first.runId });
    const responses = await second.approvalResponses(history);
    expect(responses).toEqual([expect.objectContaining({ approved: true })]);
    history.push({ role: 'tool', content: responses });
    const done = await generateText({
      model: m,
      messages: history,
      stopWhen: stepCountIs(5),
      ...second.settings(tools(world)),
    });
    expect(done.text).toBe('done');
    expect(world.executions).toEqual([{ tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }]);
    await second.end();
    expect(await outcomes(world, first.runId)).toEqual([['c1', 'ok', undefined]]);
  });

  it.each(MODES)(
    'finds the approval by run and call id, whatever the request part says (%s)',
    async (mode) => {
      world = await conformanceWorld({ reviewer: 'approve' }, mode);
      const first = await createAiSdkGate({ governor: world.governor });
      const m = model([invoice]);
      const asked = await generateText({ model: m, prompt: 'invoice acme', ...first.settings(tools(world)) });
      const history: ModelMessage[] = JSON.parse(JSON.stringify(asked.response.messages));
      // A chat app's stored history keeps the request's ids, not necessarily its reason text.
      for (const message of history) {
        if (message.role !== 'assistant' || typeof message.content === 'string') continue;
        for (const part of message.content) if (part.type === 'tool-approval-request') delete part.reason;
      }
      const second = await createAiSdkGate({ governor: world.governor, runId: first.runId });
      const responses = await second.approvalResponses(history);
      expect(responses).toEqual([expect.objectContaining({ approved: true })]);
      history.push({ role: 'tool', content: responses });
      await generateText({
        model: m,
        messages: history,
        stopWhen: stepCountIs(5),
        ...second.settings(tools(world)),
      });
      expect(world.executions).toEqual([{ tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }]);
      await second.end();
      expect(await outcomes(world, first.runId)).toEqual([['c1', 'ok', undefined]]);
    },
  );

  it.each([true, false])(
    'forwards an in-app answer (approved: %s) as the reviewer, and records the outcome',
    async (approved) => {
      world = await conformanceWorld({ reviewer: 'silent' });
      const gate = await createAiSdkGate({ governor: world.governor });
      const m = model([invoice]);
      const asked = await generateText({ model: m, prompt: 'invoice acme', ...gate.settings(tools(world)) });
      const history: ModelMessage[] = JSON.parse(JSON.stringify(asked.response.messages));
      const request = asked.content.find((part) => part.type === 'tool-approval-request');
      // What useChat sends after addToolApprovalResponse, as convertToModelMessages makes it.
      history.push({
        role: 'tool',
        content: [
          {
            type: 'tool-approval-response',
            approvalId: request?.approvalId ?? '',
            approved,
            ...(approved ? {} : { reason: 'not this month' }),
          },
        ],
      });
      const next = await createAiSdkGate({ governor: world.governor, runId: gate.runId });
      const forwarded = await next.forwardApprovalResponses(history, {
        reviewer: localReviewer(world.engine, 'alice@example.com'),
      });
      expect(forwarded).toEqual([expect.objectContaining({ toolCallId: 'c1', approved })]);
      await generateText({
        model: m,
        messages: history,
        stopWhen: stepCountIs(5),
        ...next.settings(tools(world)),
      });
      expect(world.executions).toHaveLength(approved ? 1 : 0);
      await next.end();
      const records = await world.records(gate.runId);
      expect(
        records
          .filter((record) => record.type === 'approval-response')
          .map((record) => [record.status, record.reviewer]),
      ).toEqual([[approved ? 'approved' : 'denied', 'alice@example.com']]);
      expect(await outcomes(world, gate.runId)).toEqual([
        approved ? ['c1', 'ok', undefined] : ['c1', 'denied', 'approval-denied'],
      ]);
    },
  );

  it('never runs a call the app approved in the SDK while callgate did not', async () => {
    world = await conformanceWorld({ reviewer: 'silent' });
    const gate = await createAiSdkGate({ governor: world.governor, approvalWaitMs: 100 });
    const messages: ModelMessage[] = [{ role: 'user', content: 'invoice acme' }];
    const m = model([invoice]);
    const asked = await generateText({ model: m, messages, ...gate.settings(tools(world)) });
    messages.push(...asked.response.messages);
    const request = asked.content.find((part) => part.type === 'tool-approval-request');
    // A forged answer: the app says yes without asking callgate.
    messages.push({
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: request?.approvalId ?? '', approved: true }],
    });
    await generateText({ model: m, messages, stopWhen: stepCountIs(5), ...gate.settings(tools(world)) });
    expect(world.executions).toHaveLength(0);
    expect(lastResults(m).c1?.type).toBe('execution-denied');
    expect(kindIn(lastResults(m).c1)).toBe('approval-expired');
    await gate.end();
    expect(await outcomes(world, gate.runId)).toEqual([['c1', 'denied', 'approval-expired']]);
  });

  it('refuses an approved call whose arguments were changed in the history', async () => {
    world = await conformanceWorld({ reviewer: 'approve' });
    const gate = await createAiSdkGate({ governor: world.governor });
    const messages: ModelMessage[] = [{ role: 'user', content: 'invoice acme' }];
    const m = model([invoice]);
    const asked = await generateText({ model: m, messages, ...gate.settings(tools(world)) });
    const history: ModelMessage[] = JSON.parse(JSON.stringify([...messages, ...asked.response.messages]));
    const responses = await gate.approvalResponses(history);
    for (const message of history) {
      if (message.role !== 'assistant' || typeof message.content === 'string') continue;
      for (const part of message.content)
        if (part.type === 'tool-call') part.input = { to: 'mallory', amount: 5000 };
    }
    history.push({ role: 'tool', content: responses });
    await generateText({
      model: m,
      messages: history,
      stopWhen: stepCountIs(5),
      ...gate.settings(tools(world)),
    });
    expect(world.executions).toHaveLength(0);
    await gate.end();
    expect(await outcomes(world, gate.runId)).toEqual([['c1', 'denied', 'grant-invalid']]);
  });

  it("waits for callgate's answer in place in `wait` mode", async () => {
    world = await conformanceWorld({ reviewer: 'approve' });
    const gate = await createAiSdkGate({ governor: world.governor, approvals: 'wait' });
    const result = await generateText({
      model: model([invoice]),
      prompt: 'go',
      stopWhen: stepCountIs(5),
      ...gate.settings(tools(world)),
    });
    expect(result.text).toBe('done');
    expect(world.executions).toHaveLength(1);
  });
});

describe('@callgate/ai-sdk fails closed and records outcomes', () => {
  it('refuses every call with gate-unavailable when callgate cannot be reached', async () => {
    world = await conformanceWorld({});
    const down: Governor = {
      ...world.governor,
      decide: async () => Promise.reject(new Error('connect ECONNREFUSED')),
    };
    const gate = await createAiSdkGate({ governor: down });
    const m = model([{ id: 'c1', tool: 'read_file', input: '{"path":"a"}' }]);
    await generateText({ model: m, prompt: 'go', stopWhen: stepCountIs(5), ...gate.settings(tools(world)) });
    expect(world.executions).toHaveLength(0);
    expect(kindIn(lastResults(m).c1)).toBe('gate-unavailable');
  });

  it('gates tools used without the approval function: their execute decides', async () => {
    world = await conformanceWorld({});
    const gate = await createAiSdkGate({ governor: world.governor });
    const m = model([
      { id: 'c1', tool: 'read_file', input: '{"path":"a"}' },
      { id: 'c2', tool: 'delete_file', input: '{"path":"b"}' },
    ]);
    await generateText({ model: m, prompt: 'go', stopWhen: stepCountIs(5), tools: gate.tools(tools(world)) });
    expect(world.executions.map((execution) => execution.tool)).toEqual(['read_file']);
    expect(lastResults(m).c2?.value).toMatchObject({ error: { kind: 'policy-denied' } });
    await gate.end();
    expect(await outcomes(world, gate.runId)).toEqual([
      ['c1', 'ok', undefined],
      ['c2', 'denied', 'policy-denied'],
    ]);
  });

  it('records a tool that throws as an error outcome, and a streaming tool by its last output', async () => {
    world = await conformanceWorld({});
    const gate = await createAiSdkGate({ governor: world.governor });
    const m = model([
      { id: 'c1', tool: 'read_file', input: '{"path":"missing"}' },
      { id: 'c2', tool: 'send_invoice', input: '{"to":"acme","amount":10}' },
    ]);
    const failing = tools(world, {
      read_file: () => {
        throw new Error('no such file');
      },
    });
    failing.send_invoice = tool({
      inputSchema: jsonSchema<Record<string, unknown>>({ type: 'object' }),
      async *execute() {
        yield { status: 'sending' };
        yield { status: 'sent' };
      },
    });
    await generateText({ model: m, prompt: 'go', stopWhen: stepCountIs(5), ...gate.settings(failing) });
    expect(lastResults(m).c2?.value).toEqual({ status: 'sent' });
    await gate.end();
    expect(await outcomes(world, gate.runId)).toEqual([
      ['c1', 'error', 'tool-error'],
      ['c2', 'ok', undefined],
    ]);
  });
});
