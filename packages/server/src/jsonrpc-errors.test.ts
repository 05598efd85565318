import { PassThrough } from 'node:stream';
import { parseJsonLossless } from '@callgate/core';
import { createGateway } from '@callgate/mcp-gateway';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { createApiKey } from './keys.js';
import { type Json, memoryEngine } from './test-support.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'vitest', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Text that JSON.parse refuses. */
const notJson = fc.string({ minLength: 1, maxLength: 40 }).filter((text) => {
  if (text.includes('\n') || text.trim() === '') return false;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
});
/** JSON values that are not a JSON-RPC message (no "jsonrpc": "2.0" object). */
/** Whether the gateway's strict reader takes `text` (no `__proto__`-like or repeated key). */
const readsStrictly = (text: string): boolean => {
  try {
    parseJsonLossless(text, 'message', { maxBytes: Number.POSITIVE_INFINITY, maxDepth: 80 });
    return true;
  } catch {
    return false;
  }
};
const notJsonRpc = fc
  .jsonValue()
  .filter(
    (value) =>
      !Array.isArray(value) &&
      readsStrictly(JSON.stringify(value)) &&
      (typeof value !== 'object' || value === null || (value as { jsonrpc?: unknown }).jsonrpc !== '2.0'),
  );
/** tools/call params with a wrong-typed name or arguments. */
const wrongParams = fc.oneof(
  fc.record({ name: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string())) }),
  fc.record({
    name: fc.constant('read_file'),
    arguments: fc.oneof(fc.array(fc.integer()), fc.string(), fc.integer()),
  }),
);

let context: Awaited<ReturnType<typeof setUp>>;
async function setUp() {
  const { engine, publicKey } = await memoryEngine();
  const gateway = createGateway({ engine, upstreams: [] });
  await gateway.start();
  const app = createApp({ engine, publicKey, gateway });
  const { key } = await createApiKey(engine.store, { role: 'agent', name: 'bot' });
  const post = async (body: string, session?: string) => {
    const response = await app.request('/mcp', {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        authorization: `Bearer ${key}`,
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body,
    });
    const text = await response.text();
    const data = /^data: (.*)$/m.exec(text)?.[1];
    const json: Json = (data ?? text) === '' ? undefined : JSON.parse(data ?? text);
    return { status: response.status, json, headers: response.headers };
  };
  const opened = await post(JSON.stringify(INITIALIZE));
  const session = opened.headers.get('mcp-session-id') ?? '';
  await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), session);

  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: Json[] = [];
  let buffered = '';
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      lines.push(JSON.parse(buffered.slice(0, newline)));
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  });
  const connection = await gateway.connectStdio({ principal: 'desk', profile: 'full' }, { stdin, stdout });
  /** Writes one line to the stdio session and resolves with the next answer. */
  const stdio = async (line: string): Promise<Json> => {
    const before = lines.length;
    stdin.write(`${line}\n`);
    for (let waited = 0; lines.length === before && waited < 2000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return lines[before];
  };
  await stdio(JSON.stringify(INITIALIZE));
  return { gateway, post, session, stdio, connection, stdin };
}

beforeAll(async () => {
  context = await setUp();
});
afterAll(async () => {
  context?.stdin.end();
  await context?.connection.close();
  await context?.gateway.close();
});

describe('JSON-RPC errors over stdio and HTTP', () => {
  it('a line that is not JSON gets -32700 (stdio; generated)', async () => {
    await fc.assert(
      fc.asyncProperty(notJson, async (text) => {
        const answer = await context.stdio(text);
        expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      }),
      { numRuns: 40 },
    );
    const http = await context.post('{"jsonrpc": "2.0",', context.session);
    expect(http).toMatchObject({ status: 400, json: { id: null, error: { code: -32700 } } });
  });

  it('JSON that is not a JSON-RPC message gets -32600, on both (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(notJsonRpc, async (value) => {
        const text = JSON.stringify(value);
        expect(await context.stdio(text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
        const http = await context.post(text, context.session);
        expect(http.status).toBe(400);
        expect(http.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
      }),
      { numRuns: 40 },
    );
  });

  it('JSON the strict reader refuses (a `__proto__` or repeated key) gets -32700 naming the key, on both', async () => {
    for (const text of [
      '{"__proto__":false}',
      '{"a":1,"a":2}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","constructor":1}',
    ]) {
      const stdio = await context.stdio(text);
      expect(stdio).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      expect(stdio.error.message).toMatch(/__proto__|'a'|constructor/);
      const http = await context.post(text, context.session);
      expect(http.status).toBe(400);
      expect(http.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    }
  });

  it('a batch gets -32600 on stdio (MCP has no batches); an empty batch gets -32600 on HTTP', async () => {
    const batch = JSON.stringify([{ jsonrpc: '2.0', id: 7, method: 'ping' }]);
    expect(await context.stdio(batch)).toMatchObject({
      id: null,
      error: { code: -32600, message: 'Invalid Request: batches are not supported' },
    });
    expect(await context.stdio('[]')).toMatchObject({ error: { code: -32600 } });
    expect((await context.post('[]', context.session)).json).toMatchObject({ error: { code: -32600 } });
  });

  it('wrong-typed params get -32602 naming the field, with the request id, on both (generated)', async () => {
    let id = 100;
    await fc.assert(
      fc.asyncProperty(wrongParams, async (params) => {
        id += 1;
        const text = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });
        const stdio = await context.stdio(text);
        expect(stdio).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32602 } });
        expect(stdio.error.message).toMatch(/^Invalid params: params\.(name|arguments): /);
        const http = await context.post(text, context.session);
        expect(http.json).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32602 } });
      }),
      { numRuns: 30 },
    );
    // and the session still works
    expect(await context.stdio(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }))).toMatchObject({
      id: 9,
      result: {},
    });
  });
});
