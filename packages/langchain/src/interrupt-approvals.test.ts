// Asks as LangGraph interrupts (`approvals: 'interrupt'`): the graph pauses with a HITLRequest
// naming the callgate approval, the checkpointer keeps the pause, and `Command({ resume })`
// answers it in callgate as the app's reviewer — read back by a new agent and middleware, as
// another process would.
import { localReviewer } from '@callgate/core/adapter';
import { fakeModel } from '@langchain/core/testing';
import { Command, MemorySaver } from '@langchain/langgraph';
import { AIMessage, createAgent, type HITLResponse, ToolMessage, tool } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConformanceWorld, conformanceWorld } from '../../../test/conformance/world.js';
import { type CallgateInterrupt, callgateMiddleware } from './index.js';

let world: ConformanceWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const schema = {
  type: 'object',
  properties: { to: { type: 'string' }, amount: { type: 'number' } },
  required: ['to', 'amount'],
};

/** The model asks for one large invoice (an ask), then answers `done`. */
function scriptedModel() {
  return fakeModel()
    .respond(
      new AIMessage({
        content: 'invoicing',
        id: 'msg-1',
        response_metadata: { model_name: 'scripted', finish_reason: 'tool_calls' },
        usage_metadata: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
        tool_calls: [
          { id: 'c1', name: 'send_invoice', args: { to: 'acme', amount: 5000 }, type: 'tool_call' },
        ],
      }),
    )
    .respond(new AIMessage('done'));
}

/** A new agent (and middleware) on the same checkpointer and model: another process. */
function agentOn(target: ConformanceWorld, checkpointer: MemorySaver, model: ReturnType<typeof fakeModel>) {
  const sendInvoice = tool(
    async (input: Record<string, unknown>) => JSON.stringify(target.execute('send_invoice', input)),
    {
      name: 'send_invoice',
      description: 'Send an invoice.',
      schema,
    },
  );
  return createAgent({
    model,
    tools: [sendInvoice],
    checkpointer,
    middleware: [
      callgateMiddleware({
        governor: target.governor,
        approvals: 'interrupt',
        reviewer: localReviewer(target.engine, 'alice@example.com'),
      }),
    ],
  });
}

async function interrupted(target: ConformanceWorld, thread: string) {
  const checkpointer = new MemorySaver();
  const model = scriptedModel();
  const config = { configurable: { thread_id: thread } };
  const first = await agentOn(target, checkpointer, model).invoke(
    { messages: [{ role: 'user', content: 'invoice acme' }] },
    config,
  );
  const pause = (first as { __interrupt__?: { value: CallgateInterrupt }[] }).__interrupt__?.[0]?.value;
  const resume = (response: HITLResponse) =>
    agentOn(target, checkpointer, model).invoke(new Command({ resume: response }), config);
  return { first, pause, resume };
}

async function ledger(target: ConformanceWorld, runId: string) {
  const records = await target.records(runId);
  return {
    decisions: records.filter((record) => record.type === 'call-decision').map((record) => record.effect),
    answers: records
      .filter((record) => record.type === 'approval-response')
      .map((record) => [record.status, record.reviewer]),
    ends: records
      .filter((record) => record.type === 'call-end')
      .map((record) => [record.call_id, record.outcome, record.error_kind ?? null]),
  };
}

describe("@callgate/langchain approvals: 'interrupt'", () => {
  it('pauses with a HITLRequest naming the approval; an approve resumed from the checkpoint runs the call once', async () => {
    world = await conformanceWorld({});
    const { first, pause, resume } = await interrupted(world, 't-approve');
    expect(pause?.actionRequests).toEqual([
      expect.objectContaining({
        name: 'send_invoice',
        args: { to: 'acme', amount: 5000 },
        callId: 'c1',
        approvalId: expect.stringMatching(/^ap-/),
        description: expect.stringContaining('invoices over 1000 need a person'),
      }),
    ]);
    expect(pause?.reviewConfigs).toEqual([
      { actionName: 'send_invoice', allowedDecisions: ['approve', 'edit', 'reject'] },
    ]);
    expect(world.executions).toHaveLength(0);
    const done = await resume({ decisions: [{ type: 'approve' }] });
    expect(done.messages.at(-1)?.content).toBe('done');
    expect(world.executions).toEqual([{ tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }]);
    // The model's message went through the rewrite and the checkpoint intact.
    const asked = done.messages.find(
      (message) => AIMessage.isInstance(message) && message.id === 'msg-1',
    ) as AIMessage;
    expect(asked.response_metadata).toMatchObject({ model_name: 'scripted' });
    expect(asked.usage_metadata).toMatchObject({ total_tokens: 5 });
    expect(await ledger(world, first.callgateRunId as string)).toEqual({
      decisions: ['ask'],
      answers: [['approved', 'alice@example.com']],
      ends: [['c1', 'ok', null]],
    });
  });

  it('a reject is a denial in callgate: the call never runs and the model reads why', async () => {
    world = await conformanceWorld({});
    const { first, resume } = await interrupted(world, 't-reject');
    const done = await resume({ decisions: [{ type: 'reject', message: 'not this month' }] });
    expect(world.executions).toHaveLength(0);
    const refusal = done.messages.find((message) => ToolMessage.isInstance(message)) as ToolMessage;
    expect(JSON.parse(String(refusal.content)).error).toMatchObject({
      kind: 'approval-denied',
      message: expect.stringContaining('not this month'),
    });
    expect(await ledger(world, first.callgateRunId as string)).toEqual({
      decisions: ['ask'],
      answers: [['denied', 'alice@example.com']],
      ends: [['c1', 'denied', 'approval-denied']],
    });
  });

  it('an edit is a denial unless the policy allows edits', async () => {
    world = await conformanceWorld({});
    const { first, resume } = await interrupted(world, 't-edit');
    await resume({
      decisions: [{ type: 'edit', editedAction: { name: 'send_invoice', args: { to: 'acme', amount: 50 } } }],
    });
    expect(world.executions).toHaveLength(0);
    expect((await ledger(world, first.callgateRunId as string)).ends).toEqual([
      ['c1', 'denied', 'approval-denied'],
    ]);
  });

  it('refuses a resume that does not answer every action', async () => {
    world = await conformanceWorld({});
    const { resume } = await interrupted(world, 't-bad');
    await expect(resume({ decisions: [] })).rejects.toThrow(/expected a HITLResponse with 1 decision/);
    expect(world.executions).toHaveLength(0);
  });
});
