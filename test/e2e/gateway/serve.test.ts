// The gateway wired into the product, as a user runs it: the built CLI's `callgate serve` with
// `upstreams:` in callgate.yaml (the filesystem MCP server on a temporary folder), API keys made
// by `callgate keys create`, a real MCP client at /mcp/<profile> with the agent key, an approval
// answered over the HTTP API while the call waits, the run exported and verified; then
// `callgate mcp --stdio` driven by an MCP client over its standard input and output.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN as CLI, runCallgate, type ServerProcess, startCallgate } from '../server/harness.js';
import { BIN, connectClient, errorOf, eventually, PipeTransport } from './harness.js';

const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 30s }
profiles:
  observe: [read_text_file, list_directory, write_file, move_file]
rules:
  - id: reads
    match: { annotations: { readOnlyHint: true } }
    effect: allow
  - id: writes-need-a-person
    match: { tools: [write_file] }
    effect: ask
    reason: writing files needs a person
  - id: no-moves
    match: { tools: [move_file] }
    effect: deny
    reason: moving files is not allowed
`;

const OBSERVE = ['list_directory', 'move_file', 'read_text_file', 'write_file'];

let folder: string;
let server: ServerProcess;

/** callgate.yaml's upstreams: the filesystem server on `folder`; `/mcp` is profile observe. */
const upstreamsYaml = (dir: string) => `
upstreams:
  - name: files
    stdio: { command: ${JSON.stringify(join(BIN, 'mcp-server-filesystem'))}, args: [${JSON.stringify(dir)}] }
mcp: { default_profile: observe }
`;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'callgate-serve-files-'));
  writeFileSync(join(folder, 'notes.txt'), 'one\ntwo\n');
  server = await startCallgate({
    keys: { a: 'agent', rita: 'reviewer' },
    policy: POLICY,
    config: upstreamsYaml(folder),
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** The API called with `key`: status and parsed JSON. */
async function api(path: string, key: string, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(`${server.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers' fields without declaring every shape
  return { status: response.status, json: (await response.json()) as any };
}

describe('callgate serve with upstreams', () => {
  it('prints the MCP URL and the upstreams, and reports them in health', async () => {
    expect(server.output()).toContain(`MCP        ${server.url}/mcp/<profile>`);
    expect(server.output()).toMatch(/upstreams {2}files connected, 14 tools/);
    const health = await (await fetch(`${server.url}/v1/health`)).json();
    expect(health).toMatchObject({ status: 'ok', upstreams: [{ name: 'files', status: 'connected' }] });
  });

  it('refuses a request without a key (401, the error JSON), an unknown profile (404), a foreign Host (403)', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anonymous = await fetch(`${server.url}/mcp/observe`, {
      method: 'POST',
      headers,
      body: JSON.stringify(initialize),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    expect(((await anonymous.json()) as { error: { kind: string } }).error.kind).toBe('unauthorized');
    const unknown = await fetch(`${server.url}/mcp/nope`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${server.keys.a}` },
      body: JSON.stringify(initialize),
    });
    expect(unknown.status).toBe(404);
    await unknown.text();
    // Bound to loopback, the gateway accepts only loopback Host headers (DNS rebinding).
    const rebound = await new Promise<number | undefined>((resolve, reject) => {
      const sent = httpRequest(
        `${server.url}/mcp/observe`,
        {
          method: 'POST',
          headers: { ...headers, host: 'attacker.example', authorization: `Bearer ${server.keys.a}` },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode);
        },
      );
      sent.once('error', reject);
      sent.end(JSON.stringify(initialize));
    });
    expect(rebound).toBe(403);
  });

  it('serves the profile’s tools to the agent key: allowed, denied, and an ask approved over the API', async () => {
    const { client } = await connectClient(`${server.url}/mcp/observe`, {
      headers: { Authorization: `Bearer ${server.keys.a}` },
    });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(OBSERVE);
    // `/mcp` without a profile is mcp.default_profile.
    const plain = await connectClient(`${server.url}/mcp`, {
      headers: { Authorization: `Bearer ${server.keys.a}` },
    });
    expect((await plain.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(OBSERVE);
    await plain.client.close();

    const read = await client.callTool({
      name: 'read_text_file',
      arguments: { path: join(folder, 'notes.txt') },
    });
    expect(read.isError).toBeFalsy();
    expect(read.content).toEqual([{ type: 'text', text: 'one\ntwo\n' }]);

    const moved = await client.callTool({
      name: 'move_file',
      arguments: { source: join(folder, 'notes.txt'), destination: join(folder, 'moved.txt') },
    });
    expect(moved.isError).toBe(true);
    expect(errorOf(moved)).toMatchObject({ kind: 'policy-denied' });
    // move_file declares an output schema: its refusals carry the error JSON as text only.
    expect(moved.structuredContent).toBeUndefined();
    expect(readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('one\ntwo\n');

    const target = join(folder, 'approved.txt');
    const writing = client.callTool({ name: 'write_file', arguments: { path: target, content: 'approved' } });
    const pending = await eventually(async () => {
      const { json } = await api('/v1/approvals?status=pending', server.keys.rita);
      const found = json.approvals.find((item: { tool: string }) => item.tool === 'write_file');
      expect(found).toBeDefined();
      return found as { id: string; run_id: string };
    }, 15_000);
    const approved = await api(`/v1/approvals/${pending.id}/approve`, server.keys.rita, {
      method: 'POST',
      body: { reason: 'fine' },
    });
    expect(approved.status).toBe(200);
    const written = await writing;
    expect(written.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('approved');

    // The session is one run of the key's principal; closing the client ends it.
    const run = await api(`/v1/runs/${pending.run_id}`, server.keys.rita);
    expect(run.json.run).toMatchObject({ principal: 'a', framework: 'mcp', labels: { profile: 'observe' } });
    await client.close();
    await eventually(async () => {
      expect((await api(`/v1/runs/${pending.run_id}`, server.keys.rita)).json.run.status).toBe('completed');
    });

    // Exported over the API, verified offline against the printed log key and by the server.
    const bundle = await api(`/v1/runs/${pending.run_id}/bundle`, server.keys.a);
    expect(bundle.status).toBe(200);
    const records = bundle.json.records as Array<{ type: string; tool?: string; effect?: string }>;
    expect(
      records
        .filter((record) => record.type === 'call-decision')
        .map((record) => [record.tool, record.effect]),
    ).toEqual([
      ['read_text_file', 'allow'],
      ['move_file', 'deny'],
      ['write_file', 'ask'],
    ]);
    expect(records.map((record) => record.type)).toContain('approval-response');
    const file = join(server.dir, 'bundle.json');
    writeFileSync(file, JSON.stringify(bundle.json));
    const verified = await runCallgate(['verify', file, '--public-key', server.verifierKey, '--strict']);
    expect(verified.stdout).toMatch(/^OK: /m);
    expect(verified.code).toBe(0);
    const byServer = await api('/v1/verify?strict=true', server.keys.a, {
      method: 'POST',
      body: bundle.json,
    });
    expect(byServer.json.ok).toBe(true);
  }, 60_000);
});

describe('callgate mcp --stdio', () => {
  let child: ChildProcess | undefined;

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('serves one session over stdin/stdout, logging only to stderr', async () => {
    const data = mkdtempSync(join(tmpdir(), 'callgate-mcp-stdio-'));
    try {
      child = spawn(
        process.execPath,
        [CLI, 'mcp', '--stdio', '--config', join(server.dir, 'callgate.yaml'), '--data', data],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );
      const exited = new Promise<number | null>((resolve) => child?.on('exit', (code) => resolve(code)));
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk) => {
        stdout += chunk;
      });
      child.stderr?.on('data', (chunk) => {
        stderr += chunk;
      });
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      await client.connect(new PipeTransport(child.stdout as never, child.stdin as never));

      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(OBSERVE);
      const read = await client.callTool({
        name: 'list_directory',
        arguments: { path: folder },
      });
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.content)).toContain('notes.txt');
      const moved = await client.callTool({
        name: 'move_file',
        arguments: { source: 'a', destination: 'b' },
      });
      expect(errorOf(moved).kind).toBe('policy-denied');

      await client.close();
      expect(await exited).toBe(0);
      for (const line of stdout.split('\n').filter((text) => text.trim() !== '')) {
        expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
      }
      expect(stderr).toContain('serving MCP over stdio');

      const runs = await runCallgate(['runs', 'list', '--data', data]);
      expect(runs.code).toBe(0);
      expect(runs.stdout).toContain('mcp');
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('shutdown', () => {
  it('stops cleanly with an MCP session open: the session ends, the upstream stops', async () => {
    const { client } = await connectClient(`${server.url}/mcp/observe`, {
      headers: { Authorization: `Bearer ${server.keys.a}` },
    });
    await client.listTools();
    expect(await server.stop()).toBe(0);
    expect(server.output()).toContain('callgate stopped');
    await client.close().catch(() => {});
  }, 30_000);
});
