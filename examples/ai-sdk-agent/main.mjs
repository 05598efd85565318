// An invoicing assistant on the Vercel AI SDK, governed by callgate in the same process.
// The model is scripted (no key, no network): it reads the invoices, tries to delete them, then
// sends a large invoice that needs a person. The reviewer (an approval port standing in for the
// approvals inbox) approves it; the SDK's own approval request and response parts carry it.
// The example checks what it printed and exits non-zero when anything differs.
//
//   npm run build && tools/node22/node_modules/node/bin/node examples/ai-sdk-agent/main.mjs
import { createAiSdkGate } from '@callgate/ai-sdk';
import { CallbackApprovalPort, Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { localGovernor } from '@callgate/core/adapter';
import { generateLogSigner, Ledger, verifyBundle } from '@callgate/core/ledger';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const policy = loadPolicy(`
version: 1
default: deny
approval: { ttl: 60s, wait: 30s }
rules:
  - id: reads
    match: { tools: [read_file] }
    effect: allow
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
`);

// callgate in this process: an engine on an in-memory store (use @callgate/store-sqlite's
// openEmbedded for a data folder that survives restarts), with a reviewer that approves.
const store = new MemoryStore();
const origin = 'example.local/log';
const signer = generateLogSigner(origin);
const ledger = await Ledger.open(store, { signer, origin });
const reviewer = new CallbackApprovalPort((approval) => ({
  approved: true,
  reviewer: 'finance-lead',
  reason: `${approval.tool} to acme is expected`,
}));
const engine = new Engine({ store, ledger, policy, approvalPorts: [reviewer] });

const printed = [];
const say = (line) => {
  printed.push(line);
  console.log(line);
};

const files = new Map([['invoices.txt', 'acme: 5000 EUR due']]);
const pathSchema = jsonSchema({
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
});
const tools = {
  read_file: tool({
    description: 'Read a file',
    inputSchema: pathSchema,
    execute: async ({ path }) => {
      say(`read ${path}`);
      return files.get(path) ?? '';
    },
  }),
  delete_file: tool({
    description: 'Delete a file',
    inputSchema: pathSchema,
    execute: async ({ path }) => {
      say(`deleted ${path}`);
      return files.delete(path);
    },
  }),
  send_invoice: tool({
    description: 'Send an invoice',
    inputSchema: jsonSchema({
      type: 'object',
      properties: { to: { type: 'string' }, amount: { type: 'number' } },
      required: ['to', 'amount'],
    }),
    execute: async ({ to, amount }) => {
      say(`sent an invoice of ${amount} to ${to}`);
      return { sent: true };
    },
  }),
};

// The scripted model: each call returns the next turn.
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const call = (id, name, input) => ({
  type: 'tool-call',
  toolCallId: id,
  toolName: name,
  input: JSON.stringify(input),
});
const turns = [
  [call('c1', 'read_file', { path: 'invoices.txt' }), call('c2', 'delete_file', { path: 'invoices.txt' })],
  [call('c3', 'send_invoice', { to: 'acme', amount: 5000 })],
];
const model = new MockLanguageModelV4({
  doGenerate: async () => {
    const turn = turns.shift();
    return turn
      ? { content: turn, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
      : {
          content: [{ type: 'text', text: 'Invoice sent.' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
  },
});

const gate = await createAiSdkGate({ governor: localGovernor(engine), principal: 'billing-assistant' });
const messages = [{ role: 'user', content: 'Send acme its invoice.' }];
for (;;) {
  const result = await generateText({ model, messages, stopWhen: stepCountIs(10), ...gate.settings(tools) });
  messages.push(...result.response.messages);
  for (const step of result.steps) {
    for (const part of step.content) {
      if (part.type === 'tool-approval-response' && !part.approved) {
        say(`${part.toolCall.toolName} refused: ${JSON.parse(part.reason).error.kind}`);
      }
      if (part.type === 'tool-approval-request' && !part.isAutomatic)
        say(`${part.toolCall.toolName} asks a person`);
    }
  }
  // Hand the SDK callgate's answers as its own approval response parts, then go on.
  const responses = await gate.approvalResponses(result);
  if (responses.length === 0) {
    say(`model: ${result.text}`);
    break;
  }
  for (const response of responses) say(`callgate answered: ${response.approved ? 'approved' : 'denied'}`);
  messages.push({ role: 'tool', content: responses });
}
await gate.end();

// Anyone can check the run offline: export it and verify against the log's key.
const bundle = await engine.exportRun(gate.runId);
const report = verifyBundle(JSON.parse(JSON.stringify(bundle)), {
  publicKey: signer.verifierKey,
  strict: true,
});
const ends = bundle.records
  .filter((record) => record.type === 'call-end')
  .map((record) => `${record.call_id}:${record.outcome}`);
say(`ledger: ${report.ok ? 'verified' : 'NOT verified'}, outcomes ${ends.sort().join(' ')}`);
await engine.close();

const expected = [
  'read invoices.txt',
  'delete_file refused: policy-denied',
  'send_invoice asks a person',
  'callgate answered: approved',
  'sent an invoice of 5000 to acme',
  'model: Invoice sent.',
  'ledger: verified, outcomes c1:ok c2:denied c3:ok',
];
if (JSON.stringify(printed) !== JSON.stringify(expected)) {
  console.error(`\nexample FAILED: expected\n${expected.join('\n')}`);
  process.exit(1);
}
console.log('\nexample OK');
