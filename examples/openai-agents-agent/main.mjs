// A billing agent on OpenAI Agents JS, governed by callgate in the same process. Its models are
// scripted (no key, no network). It asks a research agent (an agent used as a tool, whose own
// tools are governed too), then sends a large invoice: callgate asks a person, the run stops with
// an interruption, and the RunState is saved as a string. A fresh gate and agent — as in another
// process — restore it, take the reviewer's answer from callgate and finish the run.
// The example checks what it printed and exits non-zero when anything differs.
//
//   npm run build && tools/node22/node_modules/node/bin/node examples/openai-agents-agent/main.mjs

import { CallbackApprovalPort, Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { localGovernor } from '@callgate/core/adapter';
import { generateLogSigner, Ledger, verifyBundle } from '@callgate/core/ledger';
import { createAgentsGate } from '@callgate/openai-agents';
import { Agent, RunState, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';

setTracingDisabled(true);

const policy = loadPolicy(`
version: 1
default: deny
approval: { ttl: 60s, wait: 30s }
rules:
  - id: reads
    match: { tools: [read_file, researcher] }
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
`);

const store = new MemoryStore();
const origin = 'example.local/log';
const signer = generateLogSigner(origin);
const ledger = await Ledger.open(store, { signer, origin });
const reviewer = new CallbackApprovalPort(() => ({
  approved: true,
  reviewer: 'finance-lead',
  reason: 'matches the contract',
}));
const engine = new Engine({ store, ledger, policy, approvalPorts: [reviewer] });
const governor = localGovernor(engine);

const printed = [];
const say = (line) => {
  printed.push(line);
  console.log(line);
};

/** The agents, as the application defines them; built once per process. */
function defineAgents(gate) {
  const readFile = gate.tool({
    name: 'read_file',
    description: 'Read a file',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
    execute: async ({ path }) => {
      say(`read ${path}`);
      return 'acme: 5000 EUR due';
    },
  });
  const deleteFile = gate.tool({
    name: 'delete_file',
    description: 'Delete a file',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
    execute: async ({ path }) => say(`deleted ${path}`),
  });
  const sendInvoice = gate.tool({
    name: 'send_invoice',
    description: 'Send an invoice',
    parameters: {
      type: 'object',
      properties: { to: { type: 'string' }, amount: { type: 'number' } },
      required: ['to', 'amount'],
      additionalProperties: false,
    },
    execute: async ({ to, amount }) => {
      say(`sent an invoice of ${amount} to ${to}`);
      return 'sent';
    },
  });
  const researcher = new Agent({
    name: 'researcher',
    instructions: 'Find what is owed.',
    model: new ScriptedModel([
      [
        functionCall('read_file', { path: 'invoices.txt' }, { callId: 'r1' }),
        functionCall('delete_file', { path: 'invoices.txt' }, { callId: 'r2' }),
      ],
      [assistantMessage('acme owes 5000')],
    ]),
    tools: [readFile, deleteFile],
  });
  return gate.agent(
    new Agent({
      name: 'billing',
      instructions: 'Bill customers.',
      model: new ScriptedModel([
        [functionCall('researcher', { input: 'What does acme owe?' }, { callId: 'c1' })],
        [functionCall('send_invoice', { to: 'acme', amount: 5000 }, { callId: 'c2' })],
        [assistantMessage('Invoice sent.')],
      ]),
      tools: [
        gate.agentTool(researcher, { toolName: 'researcher', toolDescription: 'Ask the research agent' }),
        sendInvoice,
      ],
    }),
  );
}

// First process: begin a callgate run, run until the interruption, save the state.
const gate = createAgentsGate({ governor, principal: 'billing-assistant' });
const context = await gate.begin({ customer: 'acme' });
const first = await run(defineAgents(gate), 'Bill acme.', { context });
for (const item of first.interruptions)
  say(
    `${item.name} asks a person (callgate approval ${context.callgate.approvals[item.rawItem.callId] ? 'bound' : 'missing'})`,
  );
const saved = first.state.toString();

// Second process: a new gate and agents, the state from its string only.
const resumedGate = createAgentsGate({ governor, principal: 'billing-assistant' });
const agent = defineAgents(resumedGate);
const state = await RunState.fromString(agent, saved);
await resumedGate.settle(state); // callgate's answers become the SDK's approve / reject
const done = await run(agent, state);
say(`model: ${done.finalOutput}`);
await resumedGate.finish(done);

// The researcher's own calls are in a child run whose run-start names the call that asked it.
const runId = context.callgate.run_id;
const children = (await store.listRuns({ limit: 100 })).filter((run) => run.parent_run_id === runId);
const bundles = await Promise.all(
  [runId, ...children.map((run) => run.run_id)].map((id) => engine.exportRun(id)),
);
const verified = bundles.every(
  (bundle) =>
    verifyBundle(JSON.parse(JSON.stringify(bundle)), { publicKey: signer.verifierKey, strict: true }).ok,
);
const ends = bundles.flatMap((bundle) =>
  bundle.records
    .filter((record) => record.type === 'call-end')
    .map((record) => `${record.call_id}:${record.outcome}`),
);
say(`ledger: ${verified ? 'verified' : 'NOT verified'}, outcomes ${ends.sort().join(' ')}`);
await engine.close();

const expected = [
  'read invoices.txt',
  'send_invoice asks a person (callgate approval bound)',
  'sent an invoice of 5000 to acme',
  'model: Invoice sent.',
  'ledger: verified, outcomes c1:ok c2:ok r1:ok r2:denied',
];
if (JSON.stringify(printed) !== JSON.stringify(expected)) {
  console.error(`\nexample FAILED: expected\n${expected.join('\n')}`);
  process.exit(1);
}
console.log('\nexample OK');
