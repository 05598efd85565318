// A billing agent on LangChain.js (createAgent), governed by callgate's middleware, with callgate
// on its embedded default (SQLite in a data folder). The model is scripted (no key, no network).
// It reads and tries to delete in one step (one call has no id: callgate mints one), then sends a
// large invoice that a person denies. The agent is streamed. The example checks what it printed
// and exits non-zero when anything differs.
//
//   npm run build && node examples/langchain-agent/main.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallbackApprovalPort, loadPolicy } from '@callgate/core';
import { localGovernor } from '@callgate/core/adapter';
import { verifyBundle } from '@callgate/core/ledger';
import { callgateMiddleware } from '@callgate/langchain';
import { openEmbedded } from '@callgate/store-sqlite';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, createAgent, ToolMessage, tool } from 'langchain';

const policy = loadPolicy(`
version: 1
default: deny
approval: { ttl: 60s, wait: 30s }
rules:
  - id: reads
    match: { tools: [read_file] }
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
`);

const dataDir = mkdtempSync(join(tmpdir(), 'callgate-langchain-example-'));
const reviewer = new CallbackApprovalPort(() => ({
  approved: false,
  reviewer: 'finance-lead',
  reason: 'acme already paid',
}));
const callgate = await openEmbedded({ dataDir, policy, approvalPorts: [reviewer] });

const printed = [];
const say = (line) => {
  printed.push(line);
  console.log(line);
};

const pathSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const invoiceSchema = {
  type: 'object',
  properties: { to: { type: 'string' }, amount: { type: 'number' } },
  required: ['to', 'amount'],
};
/** A tool that prints what it did. */
const printing = (name, description, schema, act) =>
  tool(
    async (input) => {
      const [line, result] = act(input);
      say(line);
      return result;
    },
    { name, description, schema },
  );
const tools = [
  printing('read_file', 'Read a file', pathSchema, ({ path }) => [`read ${path}`, 'acme: 5000 EUR due']),
  printing('delete_file', 'Delete a file', pathSchema, ({ path }) => [`deleted ${path}`, 'deleted']),
  printing('send_invoice', 'Send an invoice', invoiceSchema, ({ to, amount }) => [
    `sent an invoice of ${amount} to ${to}`,
    'sent',
  ]),
];

const model = fakeModel()
  .respond(
    new AIMessage({
      content: '',
      tool_calls: [
        { name: 'read_file', args: { path: 'invoices.txt' }, type: 'tool_call' }, // no id: callgate mints one
        { id: 'c2', name: 'delete_file', args: { path: 'invoices.txt' }, type: 'tool_call' },
      ],
    }),
  )
  .respond(
    new AIMessage({
      content: '',
      tool_calls: [{ id: 'c3', name: 'send_invoice', args: { to: 'acme', amount: 5000 }, type: 'tool_call' }],
    }),
  )
  .respond(new AIMessage('acme was not invoiced.'));

const agent = createAgent({
  model,
  tools,
  middleware: [
    callgateMiddleware({ governor: localGovernor(callgate.engine), principal: 'billing-assistant' }),
  ],
});

let runId;
for await (const update of await agent.stream(
  { messages: [{ role: 'user', content: 'Bill acme.' }] },
  { streamMode: 'updates' },
)) {
  for (const [node, change] of Object.entries(update)) {
    if (change?.callgateRunId) runId = change.callgateRunId;
    for (const message of change?.messages ?? []) {
      if (ToolMessage.isInstance(message) && message.status === 'error') {
        const { error } = JSON.parse(String(message.content));
        say(`${message.name} refused: ${error.kind}`);
      }
      if (
        node === 'model_request' &&
        AIMessage.isInstance(message) &&
        (message.tool_calls?.length ?? 0) === 0
      ) {
        say(`model: ${message.content}`);
      }
    }
  }
}

const bundle = await callgate.engine.exportRun(runId);
const report = verifyBundle(JSON.parse(JSON.stringify(bundle)), {
  publicKey: callgate.verifierKey,
  strict: true,
});
const decisions = bundle.records.filter((record) => record.type === 'call-decision');
const minted = decisions.filter((record) => record.minted).map((record) => record.tool);
const ends = bundle.records
  .filter((record) => record.type === 'call-end')
  .map((record) => `${record.tool}:${record.outcome}`);
say(
  `ledger: ${report.ok ? 'verified' : 'NOT verified'}, minted ids for ${minted.join(', ')}, outcomes ${ends.sort().join(' ')}`,
);
await callgate.close();
rmSync(dataDir, { recursive: true, force: true });

const expected = [
  'read invoices.txt',
  'delete_file refused: policy-denied',
  'send_invoice refused: approval-denied',
  'model: acme was not invoiced.',
  'ledger: verified, minted ids for read_file, outcomes delete_file:denied read_file:ok send_invoice:denied',
];
if (JSON.stringify(printed) !== JSON.stringify(expected)) {
  console.error(`\nexample FAILED: expected\n${expected.join('\n')}`);
  process.exit(1);
}
console.log('\nexample OK');
