// The billing agent on LangChain.js again, this time against a callgate server: the middleware
// talks to it over HTTP (`remoteGovernor`) with an agent key, and the large invoice waits until
// a reviewer answers in the inbox.
//
//   node server.mjs --url http://127.0.0.1:7420 --key <agent key>
//       against your `callgate serve --policy policy.yaml` (see README.md): approve or deny the
//       invoice at http://127.0.0.1:7420/ui/approvals.
//   node server.mjs
//       self-check: starts its own server, approves through the API with a reviewer key,
//       verifies the exported run against the log key, and exits 1 when anything differs.
import { remoteGovernor } from '@callgate/client';
import { callgateMiddleware } from '@callgate/langchain';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, createAgent, ToolMessage, tool } from 'langchain';
import { serverExample } from '../support/server.mjs';

const { client, say, runExample } = await serverExample(new URL('policy.yaml', import.meta.url));
const invoiceSchema = {
  type: 'object',
  properties: { to: { type: 'string' }, amount: { type: 'number' } },
  required: ['to', 'amount'],
};
const tools = [
  tool(
    async () => {
      say('read invoices.txt');
      return 'acme: 5000 EUR due';
    },
    {
      name: 'read_file',
      description: 'Read a file',
      schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  ),
  tool(
    async ({ to, amount }) => {
      say(`sent an invoice of ${amount} to ${to}`);
      return 'sent';
    },
    { name: 'send_invoice', description: 'Send an invoice', schema: invoiceSchema },
  ),
];
const model = fakeModel()
  .respond(
    new AIMessage({
      content: '',
      tool_calls: [{ id: 'c1', name: 'read_file', args: { path: 'invoices.txt' }, type: 'tool_call' }],
    }),
  )
  .respond(
    new AIMessage({
      content: '',
      tool_calls: [{ id: 'c2', name: 'send_invoice', args: { to: 'acme', amount: 5000 }, type: 'tool_call' }],
    }),
  )
  .respond(new AIMessage('Invoice sent.'));
const agent = createAgent({
  model,
  tools,
  middleware: [callgateMiddleware({ governor: remoteGovernor(client) })],
});

await runExample(async () => {
  let runId;
  for await (const update of await agent.stream(
    { messages: [{ role: 'user', content: 'Bill acme.' }] },
    { streamMode: 'updates' },
  )) {
    for (const [node, change] of Object.entries(update)) {
      if (change?.callgateRunId) runId = change.callgateRunId;
      for (const message of change?.messages ?? []) {
        if (ToolMessage.isInstance(message) && message.status === 'error')
          say(`${message.name} refused: ${JSON.parse(String(message.content)).error.kind}`);
        if (
          node === 'model_request' &&
          AIMessage.isInstance(message) &&
          (message.tool_calls?.length ?? 0) === 0
        )
          say(`model: ${message.content}`);
      }
    }
  }
  return runId;
});
