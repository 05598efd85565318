// Values a governed tool takes from the run context (`injected`) are decided with the call: the
// ledger's effective-arguments record names them, the reviewer of an ask sees them, and the tool
// runs with exactly the values decided, whatever the run context holds by then. In this process
// and against the server. Node 22.
import type { LedgerRecord } from '@callgate/protocol';
import { Agent, type RunContext, RunState, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConformanceWorld, conformanceWorld, MODES } from '../../../test/conformance/world.js';
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

interface AppContext {
  tenant: string;
  account: { id: string; limit: number };
}

/** An agent whose model asks for `call` once, then answers `done`; its tools inject from the context. */
function agentFor(gate: AgentsGate, target: ConformanceWorld, call: { name: string; args: string }) {
  const model = new ScriptedModel([
    [functionCall(call.name, call.args, { callId: 'c1' })],
    [assistantMessage('done')],
  ]);
  const tools = ['send_invoice', 'read_file'].map((name) =>
    gate.tool({
      name,
      description: name,
      parameters: parameters as never,
      strict: false,
      injected: (runContext: RunContext<AppContext>) => ({
        tenant: runContext.context.tenant,
        account: runContext.context.account,
      }),
      execute: async (input: unknown) => target.execute(name, input as Record<string, unknown>),
    }),
  );
  return gate.agent(new Agent<AppContext>({ name: 'assistant', instructions: 'Help.', model, tools }));
}

function effectiveRecords(records: LedgerRecord[]) {
  return records.filter((record) => record.type === 'effective-arguments');
}

describe.each(MODES)('@callgate/openai-agents injected values (%s)', (mode) => {
  it('records an allowed call’s injected values beside the model’s and runs with them', async () => {
    world = await conformanceWorld({}, mode);
    const gate = createAgentsGate({ governor: world.governor });
    const agent = agentFor(gate, world, { name: 'read_file', args: '{"path":"notes.txt"}' });
    const context = await gate.begin<AppContext>({ tenant: 'acme', account: { id: 'a-1', limit: 100 } });
    const done = await run(agent, 'read notes', { context, ...gate.runOptions() });
    expect(done.finalOutput).toBe('done');
    expect(world.executions).toEqual([
      {
        tool: 'read_file',
        arguments: { path: 'notes.txt', tenant: 'acme', account: { id: 'a-1', limit: 100 } },
      },
    ]);
    await gate.finish(done);
    const records = await world.records(context.callgate.run_id);
    const [effective] = effectiveRecords(records);
    expect(effective).toMatchObject({ call_id: 'c1', tool: 'read_file', injected: ['account', 'tenant'] });
    const decision = records.find((record) => record.type === 'call-decision' && record.call_id === 'c1');
    expect(effective && 'arguments_digest' in effective ? effective.arguments_digest : undefined).toBe(
      decision && 'arguments_digest' in decision ? decision.arguments_digest : 'no decision',
    );
  });

  it('shows an ask’s injected values to the reviewer and runs with exactly those after approval', async () => {
    world = await conformanceWorld({ reviewer: 'approve' }, mode);
    const gate = createAgentsGate({ governor: world.governor });
    const agent = agentFor(gate, world, { name: 'send_invoice', args: '{"to":"acme","amount":5000}' });
    const context = await gate.begin<AppContext>({ tenant: 'acme', account: { id: 'a-1', limit: 9000 } });
    const interrupted = await run(agent, 'invoice acme', { context, ...gate.runOptions() });
    expect(interrupted.interruptions).toHaveLength(1);
    const [approval] = await world.store.listApprovals({ run_id: context.callgate.run_id });
    expect(approval?.arguments).toEqual({ to: 'acme', amount: 5000 });
    expect(approval?.injected).toEqual({ tenant: 'acme', account: { id: 'a-1', limit: 9000 } });
    // The run context changes while the call waits: what runs is what the reviewer saw.
    context.account = { id: 'a-2', limit: 1 };
    await gate.settle(interrupted);
    const done = await run(agent, interrupted.state, gate.runOptions());
    expect(done.finalOutput).toBe('done');
    expect(world.executions).toEqual([
      {
        tool: 'send_invoice',
        arguments: { to: 'acme', amount: 5000, tenant: 'acme', account: { id: 'a-1', limit: 9000 } },
      },
    ]);
    await gate.finish(done);
    const records = await world.records(context.callgate.run_id);
    expect(effectiveRecords(records)).toEqual([
      expect.objectContaining({ call_id: 'c1', injected: ['account', 'tenant'] }),
    ]);
    expect(records.filter((record) => record.type === 'call-end')).toEqual([
      expect.objectContaining({ call_id: 'c1', outcome: 'ok' }),
    ]);
  });

  it('runs a call resumed by another process with the injected values its approval holds', async () => {
    world = await conformanceWorld({ reviewer: 'approve' }, mode);
    const first = createAgentsGate({ governor: world.governor });
    const invoice = { name: 'send_invoice', args: '{"to":"acme","amount":5000}' };
    const context = await first.begin<AppContext>({ tenant: 'acme', account: { id: 'a-1', limit: 9000 } });
    const interrupted = await run(agentFor(first, world, invoice), 'invoice acme', {
      context,
      ...first.runOptions(),
    });
    expect(interrupted.interruptions).toHaveLength(1);
    // Another process: a new gate and agent, the state from its string, a context changed since.
    const saved = JSON.parse(interrupted.state.toString());
    saved.context.context.account = { id: 'a-2', limit: 1 };
    const second = createAgentsGate({ governor: world.governor });
    const agent = agentFor(second, world, invoice);
    const state = await RunState.fromString(agent, JSON.stringify(saved));
    await second.settle(state);
    const done = await run(agent, state, second.runOptions());
    expect(done.finalOutput).toBe('done');
    expect(world.executions).toEqual([
      {
        tool: 'send_invoice',
        arguments: { to: 'acme', amount: 5000, tenant: 'acme', account: { id: 'a-1', limit: 9000 } },
      },
    ]);
    await second.finish(done);
  });

  it('refuses a call whose injected values have no JSON form, and never runs it', async () => {
    world = await conformanceWorld({}, mode);
    const gate = createAgentsGate({ governor: world.governor });
    const agent = agentFor(gate, world, { name: 'read_file', args: '{"path":"notes.txt"}' });
    const context = await gate.begin<AppContext>({
      tenant: 'acme',
      account: { id: 'a-1', limit: Number.NaN },
    });
    const done = await run(agent, 'read notes', { context, ...gate.runOptions() });
    expect(done.finalOutput).toBe('done');
    expect(world.executions).toEqual([]);
    await gate.finish(done);
  });
});
