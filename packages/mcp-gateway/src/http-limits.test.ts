import {
  Engine,
  generateEd25519KeyPair,
  Ledger,
  loadPolicy,
  logSignerFromPrivateKey,
  MemoryStore,
} from '@callgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway, type GatewayOptions } from './gateway.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'vitest', version: '1' } },
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const CONTEXT = { principal: 'bot', profile: 'full' };

let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function startGateway(options: Partial<GatewayOptions> = {}): Promise<Gateway> {
  const store = new MemoryStore();
  const origin = 'test.local/gateway';
  const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
  const ledger = await Ledger.open(store, { signer, origin });
  const engine = new Engine({ store, ledger, policy: loadPolicy('version: 1\ndefault: deny\nrules: []\n') });
  gateway = createGateway({ engine, upstreams: [], ...options });
  await gateway.start();
  return gateway;
}

/** A body streamed without a Content-Length (so only counting can hold it to a limit). */
function streamed(text: string): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
}

describe('the gateway’s HTTP bodies (hono/body-limit)', () => {
  it('answers 413 with a JSON-RPC error to a POST over maxBodyBytes, declared or streamed', async () => {
    const served = await startGateway({ maxBodyBytes: 1024 });
    const big = JSON.stringify({
      ...INITIALIZE,
      params: { ...INITIALIZE.params, padding: 'x'.repeat(2048) },
    });
    const declared = await served.handleRequest(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { ...HEADERS, 'content-length': String(big.length) },
        body: big,
      }),
      CONTEXT,
    );
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Payload Too Large' },
      id: null,
    });
    const stream = await served.handleRequest(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: HEADERS,
        body: streamed(big),
        duplex: 'half',
      } as RequestInit),
      CONTEXT,
    );
    expect(stream.status).toBe(413);
    // Under the limit, streamed, the same request opens a session.
    const small = await served.handleRequest(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: HEADERS,
        body: streamed(JSON.stringify(INITIALIZE)),
        duplex: 'half',
      } as RequestInit),
      CONTEXT,
    );
    expect(small.status).toBe(200);
    expect(small.headers.get('mcp-session-id')).toMatch(/\S/);
  });
});
