// Journeys through the gateway in front of real MCP servers from npm: the filesystem server on
// a temporary folder and the "everything" server, both over stdio, reached by the SDK's Client.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Approval } from '@callgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  errorOf,
  eventually,
  everythingUpstream,
  filesystemUpstream,
  type ServedGateway,
  serveGateway,
} from './harness.js';

const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 20s, allow_edits: false }
scrub: [tail]
profiles:
  observe: [read_text_file, list_directory, list_allowed_directories, echo]
rules:
  - id: reads
    match: { annotations: { readOnlyHint: true } }
    effect: allow
  - id: long-operations
    match: { tools: [trigger-long-running-operation, trigger-sampling-request] }
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

let folder: string;
let served: ServedGateway;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'callgate-gateway-'));
  writeFileSync(join(folder, 'notes.txt'), 'one\ntwo\nthree\n');
  served = await serveGateway({
    policy: POLICY,
    upstreams: [filesystemUpstream(folder), everythingUpstream()],
    progressIntervalMs: 100,
    pageSize: 7,
  });
}, 60_000);

afterAll(async () => {
  await served?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** Waits for the next approval the engine creates. */
function nextApproval(): Promise<Approval> {
  return new Promise((resolve) => {
    const stop = served.engine.onApproval((approval) => {
      if (approval.status !== 'pending') return;
      stop();
      resolve(approval);
    });
  });
}

describe('listing', () => {
  it('shows only the profile tools, with scrubbed parameters removed', async () => {
    const { client } = await connectClient(served.url('observe'));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'echo',
      'list_allowed_directories',
      'list_directory',
      'read_text_file',
    ]);
    const read = tools.find((tool) => tool.name === 'read_text_file');
    expect(Object.keys(read?.inputSchema.properties ?? {})).toEqual(['path', 'head']);
    expect(read?.inputSchema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    await client.close();
  });

  it('pages the full list with cursors', async () => {
    const { client } = await connectClient(served.url());
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      expect(page.tools.length).toBeLessThanOrEqual(7);
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(2);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('write_file');
    expect(names).toContain('get-sum');
    await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toThrow(/invalid cursor/);
    await client.close();
  });
});

describe('sessions', () => {
  it('answer only the principal and profile that opened them', async () => {
    const { client, transport } = await connectClient(served.url('observe'));
    const post = (url: string, principal: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId as string,
          'mcp-protocol-version': '2025-11-25',
          'x-test-principal': principal,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
      });
    expect((await post(served.url('observe'), 'mallory')).status).toBe(404);
    expect((await post(served.url(), 'alice')).status).toBe(404);
    expect((await post(served.url('observe'), 'alice')).status).toBe(200);
    expect((await fetch(served.url('no-such-profile'), { method: 'POST' })).status).toBe(404);
    await client.close();
  });
});

describe('calls', () => {
  it('forwards an allowed call and returns the upstream result unchanged', async () => {
    const { client } = await connectClient(served.url('observe'));
    const result = await client.callTool({
      name: 'read_text_file',
      arguments: { path: join(folder, 'notes.txt'), tail: 1 },
    });
    expect(result.isError).toBeFalsy();
    // `tail` is scrubbed: the whole file comes back.
    expect(result.structuredContent).toEqual({ content: 'one\ntwo\nthree\n' });
    await client.close();
  });

  it('refuses a denied call with the error JSON, never a protocol error', async () => {
    const { client } = await connectClient(served.url());
    const source = join(folder, 'notes.txt');
    const result = await client.callTool({
      name: 'move_file',
      arguments: { source, destination: join(folder, 'moved.txt') },
    });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({
      kind: 'policy-denied',
      message: 'moving files is not allowed',
      rules: ['no-moves'],
    });
    expect(existsSync(source)).toBe(true);
    // A tool without an output schema also carries the error as structured content.
    const denied = await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    expect(denied.isError).toBe(true);
    expect(denied.structuredContent).toEqual({ error: errorOf(denied) });
    await client.close();
  });

  it('refuses a tool outside the profile as if it did not exist', async () => {
    const { client } = await connectClient(served.url('observe'));
    const result = await client.callTool({
      name: 'write_file',
      arguments: { path: join(folder, 'x.txt'), content: 'x' },
    });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ kind: 'tool-not-found', message: 'no tool named "write_file"' });
    expect(existsSync(join(folder, 'x.txt'))).toBe(false);
    await client.close();
  });

  it('refuses arguments sent as JSON text where the schema wants an array', async () => {
    const { client } = await connectClient(served.url());
    const result = await client.callTool({
      name: 'read_multiple_files',
      arguments: { paths: '["a.txt","b.txt"]' },
    });
    expect(result.isError).toBe(true);
    expect(errorOf(result).kind).toBe('tool-args-invalid');
    expect(errorOf(result).message).toMatch(
      /arguments\.paths arrived as a JSON-encoded string, but the schema wants an array/,
    );
    await client.close();
  });
});

describe('approvals', () => {
  it('runs an ask once a reviewer approves it through the engine, with progress meanwhile', async () => {
    const { client } = await connectClient(served.url());
    const target = join(folder, 'approved.txt');
    const asked = nextApproval();
    const progress: number[] = [];
    const call = client.callTool(
      { name: 'write_file', arguments: { path: target, content: 'yes' } },
      undefined,
      {
        onprogress: (value) => progress.push(value.progress),
        resetTimeoutOnProgress: true,
      },
    );
    const approval = await asked;
    expect(approval).toMatchObject({ tool: 'write_file', reason: 'writing files needs a person' });
    await new Promise((wake) => setTimeout(wake, 250));
    await served.engine.respondToApproval(approval.id, { approved: true, reviewer: 'bob', reason: 'fine' });
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('yes');
    expect(progress.length).toBeGreaterThan(0);
    await client.close();
  });

  it('asks through elicitation when the client offers it', async () => {
    const { client } = await connectClient(served.url(), { capabilities: { elicitation: {} } });
    const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const messages: string[] = [];
    let answer: { approve: boolean; reason: string } = { approve: true, reason: 'looks right' };
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      messages.push(String(request.params.message));
      return { action: 'accept', content: answer };
    });
    const target = join(folder, 'elicited.txt');
    const result = await client.callTool({
      name: 'write_file',
      arguments: { path: target, content: 'elicited' },
    });
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('elicited');
    expect(messages[0]).toMatch(/write_file needs your approval — writing files needs a person/);
    const [approval] = (await served.engine.listApprovals({ status: 'approved' })).filter((item) =>
      JSON.stringify(item.arguments).includes('elicited.txt'),
    );
    expect(approval).toMatchObject({ reviewer: 'alice (elicitation)', response_reason: 'looks right' });

    answer = { approve: false, reason: 'not today' };
    const refused = await client.callTool({
      name: 'write_file',
      arguments: { path: join(folder, 'no.txt'), content: 'no' },
    });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)).toMatchObject({ kind: 'approval-denied' });
    expect(errorOf(refused).message).toMatch(/denied: not today/);
    expect(existsSync(join(folder, 'no.txt'))).toBe(false);
    await client.close();
  });

  it('withdraws the approval when the client cancels the call', async () => {
    const { client } = await connectClient(served.url());
    const asked = nextApproval();
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'write_file', arguments: { path: join(folder, 'cancelled.txt'), content: 'c' } },
      undefined,
      {
        signal: controller.signal,
      },
    );
    const approval = await asked;
    controller.abort('changed my mind');
    await expect(call).rejects.toThrow();
    const state = await eventually(async () => {
      const current = await served.engine.approval(approval.id);
      expect(current.approval.status).toBe('withdrawn');
      return current;
    });
    expect(state.approval.response_reason).toMatch(/cancelled or disconnected/);
    expect(existsSync(join(folder, 'cancelled.txt'))).toBe(false);
    await client.close();
  });

  it('withdraws the approval when the client drops the connection', async () => {
    const { client, transport } = await connectClient(served.url());
    const asked = nextApproval();
    // A raw POST, so that its connection can be dropped mid-call.
    const request = httpRequest(served.url(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId as string,
        'mcp-protocol-version': '2025-11-25',
      },
    });
    request.on('error', () => {});
    request.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'dropped',
        method: 'tools/call',
        params: { name: 'write_file', arguments: { path: join(folder, 'dropped.txt'), content: 'd' } },
      }),
    );
    const approval = await asked;
    request.destroy();
    await eventually(async () => {
      expect((await served.engine.approval(approval.id)).approval.status).toBe('withdrawn');
    });
    expect(existsSync(join(folder, 'dropped.txt'))).toBe(false);
    await client.close();
  });

  it('withdraws the approval when the client ends its session', async () => {
    const { client } = await connectClient(served.url());
    const asked = nextApproval();
    const call = client.callTool({
      name: 'write_file',
      arguments: { path: join(folder, 'ended.txt'), content: 'e' },
    });
    call.catch(() => {});
    const approval = await asked;
    await client.close();
    await eventually(async () => {
      expect((await served.engine.approval(approval.id)).approval.status).toBe('withdrawn');
    });
    expect(existsSync(join(folder, 'ended.txt'))).toBe(false);
  });

  it('honours a call a hook already decided and a person approved, asking no one again', async () => {
    const { engine } = served;
    const hookRun = await engine.startRun({ principal: 'alice', framework: 'haystack' });
    const target = join(folder, 'hooked.txt');
    const args = { path: target, content: 'from the hook' };
    const [verdict] = await engine.decide(hookRun.run_id, [
      { id: 'call-1', tool: 'write_file', arguments: args },
    ]);
    expect(verdict?.status).toBe('pending');
    await engine.respondToApproval(verdict?.approval?.id as string, { approved: true, reviewer: 'bob' });
    const before = (await engine.listApprovals()).length;

    const { client } = await connectClient(served.url());
    const result = await client.callTool({ name: 'write_file', arguments: args });
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('from the hook');
    expect((await engine.listApprovals()).length).toBe(before);
    const calls = await engine.runCalls(hookRun.run_id);
    expect(calls.find((call) => call.call_id === 'call-1')?.outcome).toBe('ok');

    // The grant is spent: the same call again is decided (and asked) afresh.
    const asked = nextApproval();
    const again = client.callTool({ name: 'write_file', arguments: args });
    const approval = await asked;
    await engine.respondToApproval(approval.id, { approved: false, reviewer: 'bob' });
    expect((await again).isError).toBe(true);
    await client.close();
  });

  it('matches the hook by run when the client names it (X-Callgate-Run), never another principal', async () => {
    const { engine } = served;
    const args = { path: join(folder, 'by-run.txt'), content: 'run' };
    const approve = async (runId: string, callId: string) => {
      const [verdict] = await engine.decide(runId, [{ id: callId, tool: 'write_file', arguments: args }]);
      await engine.respondToApproval(verdict?.approval?.id as string, { approved: true, reviewer: 'bob' });
    };
    const named = await engine.startRun({ principal: 'alice', framework: 'haystack' });
    const other = await engine.startRun({ principal: 'alice', framework: 'haystack' });
    const foreign = await engine.startRun({ principal: 'mallory', framework: 'haystack' });
    await approve(other.run_id, 'other-call');
    await approve(named.run_id, 'named-call');
    await approve(foreign.run_id, 'foreign-call');

    const { client } = await connectClient(served.url(), { headers: { 'X-Callgate-Run': named.run_id } });
    const result = await client.callTool({ name: 'write_file', arguments: args });
    expect(result.isError).toBeFalsy();
    expect(readFileSync(join(folder, 'by-run.txt'), 'utf8')).toBe('run');
    expect((await engine.runCalls(named.run_id)).find((call) => call.call_id === 'named-call')?.outcome).toBe(
      'ok',
    );
    expect(
      (await engine.runCalls(other.run_id)).find((call) => call.call_id === 'other-call')?.outcome,
    ).toBeUndefined();
    await client.close();

    // Naming a run of another principal honours nothing: the call is decided afresh.
    const { client: intruder } = await connectClient(served.url(), {
      headers: { 'X-Callgate-Run': foreign.run_id },
    });
    const asked = nextApproval();
    const call = intruder.callTool({ name: 'write_file', arguments: args });
    await engine.respondToApproval((await asked).id, { approved: false, reviewer: 'bob' });
    expect((await call).isError).toBe(true);
    expect(
      (await engine.runCalls(foreign.run_id)).find((call_) => call_.call_id === 'foreign-call')?.outcome,
    ).toBeUndefined();
    await intruder.close();
  });
});

describe('progress and cancellation pass through', () => {
  it('relays upstream progress and cancels upstream when the client cancels', async () => {
    const { client } = await connectClient(served.url());
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      undefined,
      {
        onprogress: (value) => progress.push(value.progress),
      },
    );
    expect(result.isError).toBeFalsy();
    expect(progress).toEqual([1, 2, 3]);

    const controller = new AbortController();
    const slow = client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } },
      undefined,
      {
        signal: controller.signal,
      },
    );
    setTimeout(() => controller.abort('enough'), 200);
    await expect(slow).rejects.toThrow();
    await client.close();
  });
});

describe('pass-through', () => {
  it('passes resources, prompts, completions and logging through, recording each exchange', async () => {
    const { client } = await connectClient(served.url(), { name: 'passthrough-client' });
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain(
      'demo://resource/static/document/architecture.md',
    );
    const read = await client.readResource({ uri: 'demo://resource/static/document/architecture.md' });
    expect(read.contents[0]?.uri).toBe('demo://resource/static/document/architecture.md');
    const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
    expect(dynamic.contents[0]?.uri).toBe('demo://resource/dynamic/text/3');
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
      'demo://resource/dynamic/text/{resourceId}',
    );
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(
      expect.arrayContaining(['simple-prompt', 'args-prompt']),
    );
    const prompt = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
    expect(JSON.stringify(prompt.messages)).toContain('Paris');
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(Array.isArray(completion.completion.values)).toBe(true);
    expect(await client.setLoggingLevel('info')).toEqual({});
    await expect(client.getPrompt({ name: 'no-such-prompt' })).rejects.toThrow(/no prompt named/);

    const run = (await served.engine.store.listRuns()).find(
      (item) => item.labels.client === 'passthrough-client',
    );
    const bundle = await served.engine.exportRun(run?.run_id as string);
    const methods = bundle.records
      .filter((record) => record.type === 'mcp-exchange')
      .map((record) => (record as { method: string }).method);
    expect(methods).toEqual(
      expect.arrayContaining([
        'resources/list',
        'resources/read',
        'resources/templates/list',
        'prompts/list',
        'prompts/get',
        'completion/complete',
        'logging/setLevel',
      ]),
    );
    await client.close();
  });

  it('relays an upstream sampling request to the client that made the call', async () => {
    const { client } = await connectClient(served.url(), { capabilities: { sampling: {} } });
    const { CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const asked: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(JSON.stringify(request.params.messages));
      return { role: 'assistant', content: { type: 'text', text: 'a sampled answer' }, model: 'test-model' };
    });
    const result = await client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'say hi', maxTokens: 20 },
    });
    expect(result.isError).toBeFalsy();
    expect(asked[0]).toContain('say hi');
    expect(JSON.stringify(result.content)).toContain('a sampled answer');
    await client.close();
  });
});
