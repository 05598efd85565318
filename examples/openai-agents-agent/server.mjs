// The billing agent on OpenAI Agents JS again, this time against a callgate server: the gate
// talks to it over HTTP (`remoteGovernor`) with an agent key. The large invoice interrupts the
// run; `gate.settle(state)` waits for the reviewer's answer in the inbox and turns it into the
// SDK's approve or reject, and the run finishes.
//
//   node server.mjs --url http://127.0.0.1:7420 --key <agent key>       (Node.js >= 22)
//       against your `callgate serve --policy policy.yaml` (see README.md): approve or deny the
//       invoice at http://127.0.0.1:7420/ui/approvals.
//   node server.mjs
//       self-check: starts its own server, approves through the API with a reviewer key,
//       verifies the exported run against the log key, and exits 1 when anything differs.
import { remoteGovernor } from '@callgate/client';
import { createAgentsGate } from '@callgate/openai-agents';
import { Agent, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { serverExample } from '../support/server.mjs';

setTracingDisabled(true);
const { client, say, runExample } = await serverExample(new URL('policy.yaml', import.meta.url));
const object = (properties) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

await runExample(async () => {
  const gate = createAgentsGate({ governor: remoteGovernor(client) });
  const agent = gate.agent(
    new Agent({
      name: 'billing',
      instructions: 'Bill customers.',
      model: new ScriptedModel([
        [functionCall('read_file', { path: 'invoices.txt' }, { callId: 'c1' })],
        [functionCall('send_invoice', { to: 'acme', amount: 5000 }, { callId: 'c2' })],
        [assistantMessage('Invoice sent.')],
      ]),
      tools: [
        gate.tool({
          name: 'read_file',
          description: 'Read a file',
          parameters: object({ path: { type: 'string' } }),
          execute: async () => {
            say('read invoices.txt');
            return 'acme: 5000 EUR due';
          },
        }),
        gate.tool({
          name: 'send_invoice',
          description: 'Send an invoice',
          parameters: object({ to: { type: 'string' }, amount: { type: 'number' } }),
          execute: async ({ to, amount }) => {
            say(`sent an invoice of ${amount} to ${to}`);
            return 'sent';
          },
        }),
      ],
    }),
  );
  const context = await gate.begin({ customer: 'acme' });
  let result = await run(agent, 'Bill acme.', { context });
  while (result.interruptions.length > 0) {
    await gate.settle(result.state); // waits for the person's answer in callgate
    result = await run(agent, result.state);
  }
  say(`model: ${result.finalOutput}`);
  await gate.finish(result);
  return context.callgate.run_id;
});
