// An example chat app: `streamText` behind a route handler, `useChat` in the browser, callgate in
// between. The signed-in user answers callgate's asks in the app's own approval UI: the route
// handler forwards each answer to callgate with that user's reviewer key, so the ledger names the
// user, and the approved call runs once, with its grant.
//
//   node examples/ai-sdk-chat/app.mjs     (Node 22; serves on 127.0.0.1, a scripted model)
//
// `startChatApp` is what a test drives (test: packages/ai-sdk/src/chat-app.test.ts).
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAiSdkGate } from '@callgate/ai-sdk';
import { convertToModelMessages, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { rolldown } from 'rolldown';

const here = dirname(fileURLToPath(import.meta.url));

/** The browser bundle of client.mjs (React, @ai-sdk/react), built in memory. */
async function bundleClient() {
  const bundle = await rolldown({
    input: join(here, 'client.mjs'),
    platform: 'browser',
    transform: { define: { 'process.env.NODE_ENV': '"production"' } },
    logLevel: 'silent',
  });
  const { output } = await bundle.generate({ format: 'esm', minify: true });
  await bundle.close();
  return output[0].code;
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>callgate chat</title></head>
<body><div id="root"></div><script type="module" src="/client.js"></script></body></html>`;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/**
 * A scripted model: asked anything, it sends acme an invoice of 5000 (an ask under the example
 * policy); once the call's result is in the prompt, it says what happened.
 */
export function scriptedModel() {
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const results = prompt.flatMap((message) =>
        message.role === 'tool' ? message.content.filter((part) => part.type === 'tool-result') : [],
      );
      const parts =
        results.length > 0
          ? [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: `Done: ${JSON.stringify(results.at(-1).output.value)}` },
              { type: 'text-end', id: 't' },
            ]
          : [
              {
                type: 'tool-call',
                toolCallId: `call-${prompt.length}`,
                toolName: 'send_invoice',
                input: JSON.stringify({ to: 'acme', amount: 5000 }),
              },
            ];
      const finishReason =
        results.length > 0 ? { unified: 'stop', raw: 'stop' } : { unified: 'tool-calls', raw: 'tool_calls' };
      return {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          ...parts,
          { type: 'finish', finishReason, usage },
        ]),
      };
    },
  });
}

async function readJson(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function userOf(request) {
  return /(?:^|;\s*)user=([^;]+)/.exec(request.headers.cookie ?? '')?.[1];
}

/**
 * Starts the chat app on 127.0.0.1 (port 0: the system picks one).
 * - `governor`: callgate for the agent side (an agent key's `remoteGovernor`, or `localGovernor`).
 * - `reviewerFor(user)`: the signed-in user's reviewer (a `CallgateClient` with that user's
 *   reviewer key): it answers approvals as that user.
 * - `signIn`: the user the page signs in (a cookie; a real app has its own sign-in).
 * - `sendInvoice(input)`: the tool's implementation.
 * Returns `{ url, close() }`.
 */
export async function startChatApp({ governor, reviewerFor, signIn, sendInvoice, model = scriptedModel() }) {
  const client = await bundleClient();
  const runs = new Map(); // chat id → callgate run: one run per conversation
  const tools = {
    send_invoice: tool({
      description: 'Send an invoice.',
      inputSchema: jsonSchema({
        type: 'object',
        properties: { to: { type: 'string' }, amount: { type: 'number' } },
        required: ['to', 'amount'],
      }),
      execute: async (input) => sendInvoice(input),
    }),
  };

  async function chat(request, response) {
    const user = userOf(request);
    if (!user) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { kind: 'unauthorized', message: 'sign in first' } }));
      return;
    }
    const body = await readJson(request);
    // The run acts under the agent key's name; the chat's user is a label (and its reviewer).
    const gate = await createAiSdkGate({ governor, labels: { user }, runId: runs.get(body.id) });
    runs.set(body.id, gate.runId);
    const messages = await convertToModelMessages(body.messages);
    // The user's answers in the app become callgate's answers, by this user.
    await gate.forwardApprovalResponses(messages, { reviewer: reviewerFor(user) });
    const result = streamText({
      model: gate.model(model),
      messages,
      stopWhen: stepCountIs(5),
      ...gate.settings(tools),
      // A remote governor holds a step's outcomes for the run's next request; the chat's run
      // stays open between messages, so send them when the answer is done.
      onFinish: () => governor.flush?.(),
    });
    await result.pipeUIMessageStreamToResponse(response);
  }

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (request.method === 'GET' && path === '/') {
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'set-cookie': `user=${signIn}; Path=/; HttpOnly; SameSite=Strict`,
      });
      response.end(PAGE);
    } else if (request.method === 'GET' && path === '/client.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      response.end(client);
    } else if (request.method === 'POST' && path === '/api/chat') {
      chat(request, response).catch((error) => {
        if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { kind: 'internal', message: String(error?.message ?? error) } }),
        );
      });
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Run directly: callgate in this process (an in-memory store) and the app, until Ctrl+C.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { Engine, loadPolicy, MemoryStore } = await import('@callgate/core');
  const { localGovernor, localReviewer } = await import('@callgate/core/adapter');
  const { generateLogSigner, Ledger } = await import('@callgate/core/ledger');
  const store = new MemoryStore();
  const signer = generateLogSigner('example.local/log');
  const engine = new Engine({
    store,
    ledger: await Ledger.open(store, { signer, origin: 'example.local/log' }),
    policy: loadPolicy(`
version: 1
default: deny
approval: { ttl: 10m, wait: 5m }
rules:
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
`),
  });
  const app = await startChatApp({
    governor: localGovernor(engine),
    reviewerFor: (user) => localReviewer(engine, user),
    signIn: 'alice@example.com',
    sendInvoice: (input) => ({ sent: true, ...input }),
  });
  console.log(`chat app at ${app.url} (Ctrl+C to stop)`);
  process.once('SIGINT', async () => {
    await app.close();
    await engine.close();
  });
}
