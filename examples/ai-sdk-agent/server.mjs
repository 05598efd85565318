// The invoicing assistant on the Vercel AI SDK again, this time against a callgate server: the
// gate talks to it over HTTP (`remoteGovernor`) with an agent key, and the large invoice waits
// until a reviewer answers in the inbox; the SDK's approval parts carry the answer.
//
//   node server.mjs --url http://127.0.0.1:7420 --key <agent key>       (Node.js >= 22)
//       against your `callgate serve --policy policy.yaml` (see README.md): approve or deny the
//       invoice at http://127.0.0.1:7420/ui/approvals.
//   node server.mjs
//       self-check: starts its own server, approves through the API with a reviewer key,
//       verifies the exported run against the log key, and exits 1 when anything differs.
import { createAiSdkGate } from '@callgate/ai-sdk';
import { remoteGovernor } from '@callgate/client';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { serverExample } from '../support/server.mjs';

const { client, say, runExample } = await serverExample(new URL('policy.yaml', import.meta.url));
const tools = {
  read_file: tool({
    description: 'Read a file',
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async () => {
      say('read invoices.txt');
      return 'acme: 5000 EUR due';
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
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const call = (id, name, input) => ({
  type: 'tool-call',
  toolCallId: id,
  toolName: name,
  input: JSON.stringify(input),
});
const turns = [
  [call('c1', 'read_file', { path: 'invoices.txt' })],
  [call('c2', 'send_invoice', { to: 'acme', amount: 5000 })],
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

await runExample(async () => {
  const gate = await createAiSdkGate({ governor: remoteGovernor(client) });
  const messages = [{ role: 'user', content: 'Send acme its invoice.' }];
  for (;;) {
    const result = await generateText({
      model,
      messages,
      stopWhen: stepCountIs(10),
      ...gate.settings(tools),
    });
    messages.push(...result.response.messages);
    const responses = await gate.approvalResponses(result); // waits for the person's answer
    if (responses.length === 0) {
      say(`model: ${result.text}`);
      break;
    }
    messages.push({ role: 'tool', content: responses });
  }
  await gate.end();
  return gate.runId;
});
