// How the gateway writes a tool call's answer over Streamable HTTP: a call answered at once goes
// as one buffered event-stream body (Content-Length, one write), even when the gateway is slow;
// a call still silent after a second gets its stream's headers then, and streams as it comes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, type ServedGateway, serveGateway } from './harness.js';

const FIDELITY_UPSTREAM = new URL('./fidelity-upstream.mjs', import.meta.url).pathname;

const POLICY = `
version: 1
default: deny
rules:
  - id: all
    match: { tools: [echo, hang] }
    effect: allow
`;

let served: ServedGateway;

beforeAll(async () => {
  served = await serveGateway({
    policy: POLICY,
    upstreams: [
      { name: 'fid', stdio: { command: process.execPath, args: [FIDELITY_UPSTREAM] }, timeoutMs: 30_000 },
    ],
  });
}, 30_000);

afterAll(async () => {
  await served?.close();
});

function call(sessionId: string, id: number, name: string, signal?: AbortSignal): Promise<Response> {
  return fetch(served.url(), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: { a: id } },
    }),
    ...(signal ? { signal } : {}),
  });
}

describe('gateway: how an answer is written', () => {
  it('sends a call answered at once as one buffered event-stream body', async () => {
    const { client, transport } = await connectClient(served.url());
    const response = await call(transport.sessionId as string, 1, 'echo');
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(text).toMatch(/^event: message\ndata: \{.*"id":1.*\}\n\n$/s);
    await client.close();
  });

  it('streams a call that stays silent: its headers come after about a second, before any answer', async () => {
    const { client, transport } = await connectClient(served.url());
    const cancel = new AbortController();
    const started = performance.now();
    const response = await call(transport.sessionId as string, 2, 'hang', cancel.signal);
    const waited = performance.now() - started;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('content-length')).toBeNull();
    expect(waited).toBeGreaterThanOrEqual(900);
    cancel.abort();
    await client.close();
  });
});
