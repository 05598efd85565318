import { createGateway, type Gateway, type SessionContext } from '@callgate/mcp-gateway';
import { memoryEngine, testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { createApiKey } from '../keys.js';

/** A gateway that answers every request with what it was given (the body it read, the context). */
function echoGateway(): Gateway & { seen: SessionContext[] } {
  const seen: SessionContext[] = [];
  return {
    seen,
    async start() {
      return [];
    },
    async handleRequest(request, context) {
      seen.push(context);
      return Response.json({ method: request.method, body: await request.text(), context });
    },
    async connectStdio() {
      throw new Error('not in these tests');
    },
    status() {
      return [{ name: 'files', status: 'connected', error: 'a secret path', tools: ['read_text_file', 'x'] }];
    },
    async close() {},
  };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'vitest', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('/mcp', () => {
  it('hands the unread request to the gateway with the key’s name, the profile and the run header', async () => {
    const gateway = echoGateway();
    const { call, keys } = await testApp({ gateway, defaultProfile: 'observe' });
    const body = JSON.stringify(INITIALIZE);
    const plain = await call('POST', '/mcp', { key: keys.agent, raw: body, headers: MCP_HEADERS });
    expect(plain.status).toBe(200);
    expect(plain.json).toEqual({
      method: 'POST',
      body,
      context: { principal: 'agent-1', profile: 'observe' },
    });
    const named = await call('DELETE', '/mcp/execute', {
      key: keys.admin,
      headers: { 'X-Callgate-Run': 'run-123' },
    });
    expect(named.json.context).toEqual({ principal: 'admin-1', profile: 'execute', runId: 'run-123' });
  });

  it('answers 401 without a live key and 403 to a reviewer, before the gateway sees anything', async () => {
    const gateway = echoGateway();
    const { call, keys } = await testApp({ gateway });
    const none = await call('POST', '/mcp/full', { raw: JSON.stringify(INITIALIZE), headers: MCP_HEADERS });
    expect(none.status).toBe(401);
    expect(none.json.error.kind).toBe('unauthorized');
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await call('POST', '/mcp', { key: `cg_${'A'.repeat(43)}` })).status).toBe(401);
    const reviewer = await call('GET', '/mcp', { key: keys.reviewer });
    expect(reviewer.status).toBe(403);
    expect(reviewer.json.error).toEqual({
      kind: 'forbidden',
      message: 'a reviewer key may not use the MCP gateway',
    });
    expect(gateway.seen).toEqual([]);
  });

  it('is not mounted without a gateway, and health then lists no upstreams', async () => {
    const { call, keys } = await testApp();
    expect((await call('POST', '/mcp', { key: keys.agent })).status).toBe(404);
    expect((await call('GET', '/v1/health')).json).not.toHaveProperty('upstreams');
  });

  it('reports the upstreams in health, without their errors', async () => {
    const { call } = await testApp({ gateway: echoGateway() });
    const health = await call('GET', '/v1/health');
    expect(health.json.upstreams).toEqual([{ name: 'files', status: 'connected', tools: 2 }]);
  });

  it('serves a real gateway: a session opens on a known profile, an unknown one is 404', async () => {
    const { engine, publicKey } = await memoryEngine({
      policy: 'version: 1\ndefault: deny\nprofiles: { observe: ["read_*"] }\nrules: []\n',
    });
    const gateway = createGateway({ engine, upstreams: [] });
    await gateway.start();
    const app = createApp({ engine, publicKey, gateway });
    const { key } = await createApiKey(engine.store, { role: 'agent', name: 'bot' });
    const post = (path: string) =>
      app.request(path, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
        body: JSON.stringify(INITIALIZE),
      });
    try {
      const opened = await post('/mcp/observe');
      expect(opened.status).toBe(200);
      expect(opened.headers.get('mcp-session-id')).toMatch(/\S/);
      expect(await opened.text()).toContain('"protocolVersion":"2025-11-25"');
      expect((await post('/mcp')).status).toBe(200);
      expect((await post('/mcp/nope')).status).toBe(404);
    } finally {
      await gateway.close();
    }
  });
});
