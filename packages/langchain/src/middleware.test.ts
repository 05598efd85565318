// What the scenario table does not cover: failing closed, tool errors, and the model messages
// recorded with each step's decisions.
import type { Governor } from '@callgate/core/adapter';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, createAgent, ToolMessage, tool } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConformanceWorld, conformanceWorld } from '../../../test/conformance/world.js';
import { callgateMiddleware } from './index.js';

let world: ConformanceWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

function agentFor(governor: Governor, execute: (input: Record<string, unknown>) => unknown) {
  const model = fakeModel()
    .respond(
      new AIMessage({
        content: 'reading',
        tool_calls: [{ id: 'c1', name: 'read_file', args: { path: 'a' }, type: 'tool_call' }],
      }),
    )
    .respond(new AIMessage('done'));
  const readFile = tool(async (input: Record<string, unknown>) => String(execute(input)), {
    name: 'read_file',
    description: 'read',
    schema,
  });
  return {
    agent: createAgent({ model, tools: [readFile], middleware: [callgateMiddleware({ governor })] }),
    model,
  };
}

describe('@callgate/langchain', () => {
  it('refuses every call with gate-unavailable when callgate cannot be reached', async () => {
    world = await conformanceWorld({});
    const down: Governor = {
      ...world.governor,
      decide: () => Promise.reject(new Error('connect ECONNREFUSED')),
    };
    const target = world;
    const { agent } = agentFor(down, (input) => target.execute('read_file', input));
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] });
    const refusal = result.messages.find((message) => ToolMessage.isInstance(message)) as ToolMessage;
    expect(refusal.status).toBe('error');
    expect(JSON.parse(String(refusal.content)).error.kind).toBe('gate-unavailable');
    expect(world.executions).toHaveLength(0);
  });

  it('records a tool that throws as an error outcome before LangChain raises it', async () => {
    world = await conformanceWorld({});
    const { agent } = agentFor(world.governor, () => {
      throw new Error('no such file');
    });
    await expect(agent.invoke({ messages: [{ role: 'user', content: 'go' }] })).rejects.toThrow(
      'no such file',
    );
    const [run] = await world.store.listRuns();
    const records = await world.store.readRunRecords(run?.run_id as string);
    const end = records.find((record) => record.type === 'call-end');
    expect(end).toMatchObject({
      call_id: 'c1',
      outcome: 'error',
      error_kind: 'tool-error',
      grant_consumed: true,
    });
  });

  it('records each model message with the calls it asked for', async () => {
    world = await conformanceWorld({});
    const target = world;
    const { agent } = agentFor(world.governor, (input) => target.execute('read_file', input));
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] });
    const records = await world.records(result.callgateRunId as string);
    const messages = records.filter((record) => record.type === 'model-message');
    expect(messages.map((record) => record.tool_calls.length)).toEqual([1, 0]);
    expect(messages[0]?.tool_calls[0]).toMatchObject({ call_id: 'c1', tool: 'read_file', minted: false });
    // The decision comes after the message that asked for it.
    const order = records.map((record) => record.type).filter((type) => type !== 'policy-snapshot');
    expect(order).toEqual([
      'run-start',
      'model-message',
      'call-decision',
      'call-end',
      'model-message',
      'run-end',
    ]);
  });
});
