// What the scenario table does not cover: a RunState resumed by another gate and agent (another
// process), interruptions the app approves without callgate, runs begun without callgate, tools
// callgate cannot gate, governing tools built elsewhere, and tool errors. Node 22.
import {
  Agent,
  hostedMcpTool,
  MCPServerStreamableHttp,
  RunState,
  run,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConformanceWorld, conformanceWorld } from '../../../test/conformance/world.js';
import { type AgentsGate, createAgentsGate } from './index.js';

setTracingDisabled(true);

let world: ConformanceWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const parameters = {
  type: 'object',
  properties: { to: { type: 'string' }, amount: { type: 'number' }, path: { type: 'string' } },
  required: [],
  additionalProperties: true,
} as const;

/** An agent whose model asks for `call` once, then answers `done`; tools run in `target`. */
function agentFor(
  gate: AgentsGate,
  target: ConformanceWorld,
  call: { name: string; args: string },
  execute?: (input: unknown) => unknown,
) {
  const model = new ScriptedModel([
    [functionCall(call.name, call.args, { callId: 'c1' })],
    [assistantMessage('done')],
  ]);
  const tools = ['send_invoice', 'read_file', 'delete_file'].map((name) =>
    gate.tool({
      name,
      description: name,
      parameters: parameters as never,
      strict: false,
      execute: async (input: unknown) =>
        execute ? execute(input) : target.execute(name, input as Record<string, unknown>),
    }),
  );
  return { agent: gate.agent(new Agent({ name: 'assistant', instructions: 'Help.', model, tools })), model };
}

const invoice = { name: 'send_invoice', args: '{"to":"acme","amount":5000}' };

async function outcomes(target: ConformanceWorld, runId: string) {
  const records = await target.records(runId);
  return records
    .filter((record) => record.type === 'call-end')
    .map((record) => [record.call_id, record.outcome, record.error_kind]);
}

/** The text the model read as the result of call `c1`. */
function resultText(model: ScriptedModel): string | undefined {
  const input = (model.lastCall?.request.input ?? []) as {
    type?: string;
    callId?: string;
    output?: { text?: string };
  }[];
  return input.find((item) => item.type === 'function_call_result' && item.callId === 'c1')?.output?.text;
}

describe('@callgate/openai-agents interruptions', () => {
  it('keeps the grant bound to the same call when another process resumes the serialised RunState', async () => {
    world = await conformanceWorld({ reviewer: 'approve' });
    const first = createAgentsGate({ governor: world.governor });
    const a = agentFor(first, world, invoice);
    const context = await first.begin({ tenant: 'acme' });
    const interrupted = await run(a.agent, 'invoice acme', { context });
    expect(interrupted.interruptions).toHaveLength(1);
    const saved = interrupted.state.toString();
    // Another process: a new gate and agent, the state from its string only.
    const second = createAgentsGate({ governor: world.governor });
    const b = agentFor(second, world, invoice);
    const state = await RunState.fromString(b.agent, saved);
    await second.settle(state);
    const done = await run(b.agent, state);
    expect(done.finalOutput).toBe('done');
    expect(world.executions).toEqual([{ tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }]);
    await second.finish(done);
    expect(await outcomes(world, context.callgate.run_id)).toEqual([['c1', 'ok', undefined]]);
  });

  it('never runs a call whose interruption the app approved without callgate', async () => {
    world = await conformanceWorld({ reviewer: 'silent' });
    const gate = createAgentsGate({ governor: world.governor, approvalWaitMs: 100 });
    const { agent, model } = agentFor(gate, world, invoice);
    const context = await gate.begin();
    const interrupted = await run(agent, 'invoice acme', { context });
    for (const item of interrupted.interruptions) interrupted.state.approve(item);
    const done = await run(agent, interrupted.state);
    expect(done.finalOutput).toBe('done');
    expect(world.executions).toHaveLength(0);
    expect(JSON.parse(resultText(model) ?? '').error.kind).toBe('approval-expired');
    await gate.finish(done);
  });
});

describe('@callgate/openai-agents fails closed', () => {
  it('refuses every call of a run begun without callgate (gate-unavailable)', async () => {
    world = await conformanceWorld({});
    const gate = createAgentsGate({ governor: world.governor });
    const { agent, model } = agentFor(gate, world, { name: 'read_file', args: '{"path":"a"}' });
    const done = await run(agent, 'read a');
    expect(done.finalOutput).toBe('done');
    expect(world.executions).toHaveLength(0);
    expect(JSON.parse(resultText(model) ?? '').error.kind).toBe('gate-unavailable');
  });

  it('refuses to govern tools it cannot gate', () => {
    const gate = createAgentsGate({ governor: {} as never });
    const agent = new Agent({
      name: 'a',
      tools: [hostedMcpTool({ serverLabel: 'docs', serverUrl: 'https://example.com/mcp' })],
    });
    expect(() => gate.agent(agent)).toThrow(/hosted_tool tool, which callgate cannot gate/);
  });
});

describe('@callgate/openai-agents outcomes', () => {
  it('records a tool that throws as an error outcome', async () => {
    world = await conformanceWorld({});
    const gate = createAgentsGate({ governor: world.governor });
    const { agent } = agentFor(gate, world, { name: 'read_file', args: '{"path":"missing"}' }, () => {
      throw new Error('no such file');
    });
    const context = await gate.begin();
    const done = await run(agent, 'read', { context });
    await gate.finish(done);
    expect(await outcomes(world, context.callgate.run_id)).toEqual([['c1', 'error', 'tool-error']]);
  });

  it('governs a function tool built elsewhere', async () => {
    world = await conformanceWorld({});
    const gate = createAgentsGate({ governor: world.governor });
    const plain = tool({
      name: 'delete_file',
      description: 'delete',
      parameters: parameters as never,
      strict: false,
      execute: async (input: unknown) => world?.execute('delete_file', input as Record<string, unknown>),
    });
    const model = new ScriptedModel([
      [functionCall('delete_file', '{"path":"a"}', { callId: 'c1' })],
      [assistantMessage('done')],
    ]);
    const agent = gate.agent(new Agent({ name: 'a', instructions: 'x', model, tools: [plain] }));
    const context = await gate.begin();
    const done = await run(agent, 'delete a', { context });
    await gate.finish(done);
    expect(world.executions).toHaveLength(0);
    expect(JSON.parse(resultText(model) ?? '').error.kind).toBe('policy-denied');
    expect(await outcomes(world, context.callgate.run_id)).toEqual([['c1', 'denied', 'policy-denied']]);
  });
});

describe('@callgate/openai-agents arguments the SDK cannot parse', () => {
  it('runs a call with empty argument text that callgate allows, with no interruption', async () => {
    world = await conformanceWorld({});
    const gate = createAgentsGate({ governor: world.governor });
    const a = agentFor(gate, world, { name: 'read_file', args: '' });
    const context = await gate.begin();
    const result = await run(a.agent, 'go', { context, ...gate.runOptions() });
    expect(result.interruptions).toHaveLength(0);
    expect(result.finalOutput).toBe('done');
    expect(world.executions).toEqual([{ tool: 'read_file', arguments: {} }]);
    await gate.finish(result);
    expect(await outcomes(world, gate.runIdOf(context))).toEqual([['c1', 'ok', undefined]]);
  });

  it('refuses invalid JSON before the SDK interrupts the run: no allow, and the model reads why', async () => {
    world = await conformanceWorld({});
    const gate = createAgentsGate({ governor: world.governor });
    const a = agentFor(gate, world, { name: 'read_file', args: '{"path": ' });
    const context = await gate.begin();
    const result = await run(a.agent, 'go', { context, ...gate.runOptions() });
    expect(result.interruptions).toHaveLength(0);
    expect(world.executions).toHaveLength(0);
    expect(JSON.parse(String(resultText(a.model))).error.kind).toBe('tool-args-invalid');
    await gate.finish(result);
    const records = await world.records(gate.runIdOf(context));
    const decisions = records.filter((record) => record.type === 'call-decision');
    expect(decisions.map((record) => [record.effect, record.error_kind])).toEqual([
      ['deny', 'tool-args-invalid'],
    ]);
    expect(await outcomes(world, gate.runIdOf(context))).toEqual([['c1', 'denied', 'tool-args-invalid']]);
  });
});

describe('@callgate/openai-agents MCP servers', () => {
  const gatewayUrl = 'http://127.0.0.1:7420';
  const withServer = (url: string) =>
    new Agent({ name: 'assistant', mcpServers: [new MCPServerStreamableHttp({ url, name: 'tools' })] });

  it("accepts callgate's own MCP gateway, any profile, and refuses every other MCP server", () => {
    const gate = createAgentsGate({ governor: {} as never, gatewayUrl });
    for (const url of [`${gatewayUrl}/mcp`, `${gatewayUrl}/mcp/execute`, `${gatewayUrl}/mcp/observe/`])
      expect(gate.agent(withServer(url)).mcpServers).toHaveLength(1);
    for (const url of [
      'https://example.com/mcp',
      'http://127.0.0.1:7421/mcp/execute',
      `${gatewayUrl}/mcp/execute/tools`,
      `${gatewayUrl}/mcpx`,
    ])
      expect(() => gate.agent(withServer(url)), url).toThrow(/put it behind the callgate MCP gateway/);
  });

  it('refuses MCP servers when the gate does not know the gateway', () => {
    const gate = createAgentsGate({ governor: {} as never });
    expect(() => gate.agent(withServer(`${gatewayUrl}/mcp/execute`))).toThrow(/give the gate its gatewayUrl/);
  });
});
