// The gateway's stdio mode (what `callgate mcp --stdio` serves to desktop clients): one
// session over newline-delimited JSON-RPC, one run that ends when stdin closes.
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceUpstream, startConformanceUpstream } from './conformance-upstream.js';
import { errorOf, eventually, PipeTransport, type ServedGateway, serveGateway } from './harness.js';

const POLICY = `
version: 1
default: deny
profiles:
  observe: [test_simple_text]
rules:
  - id: simple
    match: { tools: [test_simple_text] }
    effect: allow
`;

let upstream: ConformanceUpstream;
let served: ServedGateway;

beforeAll(async () => {
  upstream = await startConformanceUpstream();
  served = await serveGateway({
    policy: POLICY,
    upstreams: [{ name: 'conformance', http: { url: upstream.url } }],
  });
}, 30_000);

afterAll(async () => {
  await served?.close();
  await upstream?.close();
});

describe('stdio mode', () => {
  it('serves one session whose run ends when stdin closes', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const connection = await served.gateway.connectStdio(
      { principal: 'desktop-user', profile: 'observe' },
      { stdin, stdout },
    );
    const client = new Client({ name: 'desktop-client', version: '1.0.0' });
    await client.connect(new PipeTransport(stdout, stdin));

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['test_simple_text']);
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    const refused = await client.callTool({ name: 'test_error_handling', arguments: {} });
    expect(errorOf(refused).kind).toBe('tool-not-found');

    const runs = await served.engine.store.listRuns();
    const run = runs.find((item) => item.principal === 'desktop-user');
    expect(run).toMatchObject({ framework: 'mcp', labels: { profile: 'observe', client: 'desktop-client' } });

    stdin.end();
    await connection.closed;
    await eventually(async () =>
      expect((await served.engine.store.getRun(run?.run_id as string))?.status).toBe('completed'),
    );
  });

  it('refuses a profile the policy does not define', async () => {
    await expect(
      served.gateway.connectStdio(
        { principal: 'x', profile: 'nope' },
        { stdin: new PassThrough(), stdout: new PassThrough() },
      ),
    ).rejects.toThrow(/no profile named nope/);
  });
});

describe('idle HTTP sessions', () => {
  it('end, with their run, after the idle time', async () => {
    const idle = await serveGateway({
      policy: POLICY,
      upstreams: [{ name: 'conformance', http: { url: upstream.url } }],
      sessionIdleMs: 500,
    });
    try {
      // A client that initializes, then goes away without ending its session or keeping a stream.
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const initialize = await fetch(idle.url(), {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'idle-client', version: '1' },
          },
        }),
      });
      const session = initialize.headers.get('mcp-session-id') as string;
      await initialize.text();
      const initialized = await fetch(idle.url(), {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      expect(initialized.status).toBe(202);
      const run = await eventually(async () => {
        const found = (await idle.engine.store.listRuns()).find(
          (item) => item.labels.client === 'idle-client',
        );
        expect(found).toBeDefined();
        return found;
      });
      await eventually(
        async () => expect((await idle.engine.store.getRun(run?.run_id as string))?.status).toBe('cancelled'),
        8_000,
      );
      const gone = await fetch(idle.url(), {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
      expect(gone.status).toBe(404);
    } finally {
      await idle.close();
    }
  }, 15_000);
});
