import { gzipSync } from 'node:zlib';
import { Engine, loadPolicy, MemoryStore } from '@callgate/core';
import { generateEd25519KeyPair } from '@callgate/core/crypto';
import { Ledger, logSignerFromPrivateKey } from '@callgate/core/ledger';
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
      error: { code: -32000, message: 'Payload Too Large: the body is over the limit of 1024 bytes' },
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

/** A request as @hono/node-server builds it: the URL's authority is the Host header. */
function arriving(host: string, init: RequestInit & { headers?: Record<string, string> }, path = '/mcp') {
  return new Request(`http://${host}${path}`, { ...init, headers: { ...HEADERS, host, ...init.headers } });
}

describe('the gateway’s DNS rebinding protection (the MCP SDK transport’s allowedHosts / allowedOrigins)', () => {
  it('answers 415 to a body in a content coding, whatever the coding or the bytes, and takes identity', async () => {
    const served = await startGateway();
    const text = JSON.stringify(INITIALIZE);
    for (const [coding, body] of [
      ['gzip', gzipSync(text)],
      ['gzip', text], // mislabelled: not read as if it were plain
      ['zstd', text],
      ['identity, br', text],
    ] as const) {
      const answer = await served.handleRequest(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { ...HEADERS, 'content-encoding': coding },
          body: typeof body === 'string' ? body : new Uint8Array(body),
        }),
        CONTEXT,
      );
      expect(answer.status, coding).toBe(415);
      expect(answer.headers.get('accept-encoding')).toBe('identity');
      const named = coding.split(', ').pop();
      expect(await answer.json()).toEqual({
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: `Unsupported Media Type: Content-Encoding "${named}": send MCP messages uncompressed`,
        },
        id: null,
      });
    }
    const plain = await served.handleRequest(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { ...HEADERS, 'content-encoding': 'identity' },
        body: text,
      }),
      CONTEXT,
    );
    expect(plain.status).toBe(200);
  });

  it('accepts a listed host name on any port and refuses another Host with 403, on opening and after', async () => {
    const served = await startGateway({ allowedHosts: ['localhost', '127.0.0.1', '[::1]'] });
    const body = JSON.stringify(INITIALIZE);
    for (const host of ['localhost:7420', '127.0.0.1:51234', '[::1]:8080', 'localhost']) {
      const opened = await served.handleRequest(arriving(host, { method: 'POST', body }), CONTEXT);
      expect(opened.status, host).toBe(200);
    }
    const foreign = await served.handleRequest(
      arriving('attacker.example:7420', { method: 'POST', body }),
      CONTEXT,
    );
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    // A session opened from a good Host refuses a later request naming another one.
    const opened = await served.handleRequest(arriving('localhost:7420', { method: 'POST', body }), CONTEXT);
    const session = opened.headers.get('mcp-session-id') ?? '';
    const later = await served.handleRequest(
      arriving('attacker.example:7420', { method: 'DELETE', headers: { 'mcp-session-id': session } }),
      CONTEXT,
    );
    expect(later.status).toBe(403);
    const ended = await served.handleRequest(
      arriving('localhost:7420', { method: 'DELETE', headers: { 'mcp-session-id': session } }),
      CONTEXT,
    );
    expect(ended.status).toBe(200);
  });

  it('refuses a listed-out Origin with 403 and accepts a listed one or none', async () => {
    const served = await startGateway({ allowedOrigins: ['http://localhost:5173'] });
    const body = JSON.stringify(INITIALIZE);
    const open = (headers: Record<string, string>) =>
      served.handleRequest(arriving('localhost:7420', { method: 'POST', body, headers }), CONTEXT);
    expect((await open({ origin: 'http://evil.example' })).status).toBe(403);
    expect((await open({ origin: 'http://localhost:5173' })).status).toBe(200);
    expect((await open({})).status).toBe(200);
  });

  it('without lists, any Host is accepted', async () => {
    const served = await startGateway();
    const opened = await served.handleRequest(
      arriving('anything.example', { method: 'POST', body: JSON.stringify(INITIALIZE) }),
      CONTEXT,
    );
    expect(opened.status).toBe(200);
  });
});
