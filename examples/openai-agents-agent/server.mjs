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
import { CallgateClient, remoteGovernor } from '@callgate/client';
import { verifyBundle } from '@callgate/core/ledger';
import { createAgentsGate } from '@callgate/openai-agents';
import { Agent, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import {
  answerWhenAsked,
  exampleServer,
  expectPrinted,
  SELF_CHECK_LINES,
  transcript,
} from '../support/server.mjs';

setTracingDisabled(true);
const { own, url, agentKey } = await exampleServer(new URL('policy.yaml', import.meta.url));
const client = new CallgateClient({ url, apiKey: agentKey });
const { printed, say } = transcript();
const object = (properties) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

let problem;
try {
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
  if (!own) console.log(`send_invoice will wait: approve or deny it at ${url}/ui/approvals`);
  const reviewing = own
    ? answerWhenAsked(url, own.reviewerKey, 'send_invoice', { reason: 'matches the order' }).then(
        (approval) => say(`send_invoice ${approval.status} by ${approval.reviewer} (through the API)`),
      )
    : Promise.resolve();
  const context = await gate.begin({ customer: 'acme' });
  let result = await run(agent, 'Bill acme.', { context });
  while (result.interruptions.length > 0) {
    await gate.settle(result.state); // waits for the person's answer in callgate
    result = await run(agent, result.state);
  }
  say(`model: ${result.finalOutput}`);
  await gate.finish(result);
  await reviewing;
  const runId = context.callgate.run_id;
  if (own) {
    const report = verifyBundle(await client.exportRun(runId), { publicKey: own.logKey(), strict: true });
    say(`ledger: ${report.ok ? 'verified' : 'NOT verified'} against callgate log-key show`);
  } else {
    console.log(`callgate run ${runId}: callgate export --url ${url} --key <key> --run ${runId}`);
  }
} catch (error) {
  problem = error;
} finally {
  await own?.stop();
}
if (problem) throw problem;
if (own) expectPrinted(printed, SELF_CHECK_LINES);
