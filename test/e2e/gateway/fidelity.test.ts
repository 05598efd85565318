// Record fidelity through the MCP gateway (docs/ledger.md, invariants 4 and 6), with the SDK's
// real Client and a real upstream built with the SDK's McpServer (fidelity-upstream.mjs):
// JSON-RPC is read losslessly (HTTP and stdio), and an upstream answer that is not valid JSON
// ends its call at once as a recorded `tool-error`.
import { PassThrough } from 'node:stream';
import type { LedgerRecord } from '@callgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, errorOf, type ServedGateway, serveGateway } from './harness.js';

const FIDELITY_UPSTREAM = new URL('./fidelity-upstream.mjs', import.meta.url).pathname;
const BIG = '9007199254740993';

const POLICY = `
version: 1
default: deny
profiles:
  narrow: [echo]
rules:
  - id: all
    match: { tools: [echo, nan, surrogate, bump] }
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

async function ends(): Promise<LedgerRecord[]> {
  const runs = await served.engine.store.listRuns();
  const records: LedgerRecord[] = [];
  for (const run of runs) records.push(...(await served.engine.store.readRunRecords(run.run_id)));
  return records.filter((record) => record.type === 'call-end');
}

/** Lines a stdio session writes, as parsed JSON, and a way to send raw text. */
async function stdioSession() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const connection = await served.gateway.connectStdio(
    { principal: 'desk', profile: 'full' },
    { stdin, stdout },
  );
  const lines: unknown[] = [];
  let buffer = '';
  stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let index = buffer.indexOf('\n'); index >= 0; index = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, index)));
      buffer = buffer.slice(index + 1);
    }
  });
  const send = (text: string) => stdin.write(`${text}\n`);
  const answer = async (id: number | null) => {
    for (let waited = 0; waited < 5_000; waited += 10) {
      const found = lines.find((line) => (line as { id?: unknown }).id === id);
      if (found)
        return found as {
          result?: { content: { text: string }[]; isError?: boolean };
          error?: { code: number; message: string };
        };
      await new Promise((wake) => setTimeout(wake, 10));
    }
    throw new Error(`no answer to ${id}`);
  };
  send(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
  );
  await answer(1);
  send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  return { send, answer, close: () => stdin.end(), connection };
}

describe('gateway: upstream answers that are not valid JSON', () => {
  it('ends the call at once with a tool-error saying so, and records its outcome', async () => {
    const { client } = await connectClient(served.url());
    const started = Date.now();
    const result = await client.callTool({ name: 'nan', arguments: {} });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.isError).toBe(true);
    const error = errorOf(result);
    expect(error.kind).toBe('tool-error');
    expect(error.message).toMatch(/invalid JSON/);
    await client.close();
    const recorded = (await ends()).filter((record) => record.type === 'call-end' && record.tool === 'nan');
    expect(recorded).toEqual([expect.objectContaining({ outcome: 'error', error_kind: 'tool-error' })]);
  });

  it('records a result holding a lone surrogate, normalised, and hands it to the client', async () => {
    const { client } = await connectClient(served.url());
    const result = await client.callTool({ name: 'surrogate', arguments: {} });
    expect(result.isError).toBeFalsy();
    await client.close();
    const recorded = (await ends()).filter(
      (record) => record.type === 'call-end' && record.tool === 'surrogate',
    );
    expect(recorded).toEqual([
      expect.objectContaining({ outcome: 'ok', result_normalized: ['lone-surrogate'] }),
    ]);
  });
});

describe('gateway: refused attempts are evidence', () => {
  it('a call to a tool outside the profile is a refusal record naming the principal', async () => {
    const { client } = await connectClient(served.url('narrow'), { name: 'narrow-client' });
    const result = await client.callTool({ name: 'bump', arguments: {} });
    expect(errorOf(result).kind).toBe('tool-not-found');
    await client.close();
    const runs = await served.engine.store.listRuns();
    const run = runs.find((item) => item.labels.client === 'narrow-client');
    const records = await served.engine.store.readRunRecords(run?.run_id ?? '');
    expect(records.filter((record) => record.type === 'refusal')).toEqual([
      expect.objectContaining({ kind: 'tool-out-of-profile', actor: 'alice', tool: 'bump' }),
    ]);
  });
});

describe('gateway: lossless JSON-RPC from the client', () => {
  it('stdio: refuses a big integer quoting the digits as sent, and a duplicate key naming it', async () => {
    const session = await stdioSession();
    session.send(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":${BIG}}}}`,
    );
    const big = await session.answer(2);
    expect(big.result?.isError).toBe(true);
    expect(big.result?.content[0]?.text).toContain(BIG);
    session.send(
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","name":"bump","arguments":{}}}',
    );
    const duplicate = await session.answer(null);
    expect(duplicate.error?.code).toBe(-32700);
    expect(duplicate.error?.message).toMatch(/Duplicate key 'name'/);
    session.close();
    await session.connection.closed;
  });

  it('HTTP: refuses a big integer quoting the digits as sent', async () => {
    const { client, transport } = await connectClient(served.url());
    const response = await fetch(served.url(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId as string,
        'mcp-protocol-version': '2025-06-18',
      },
      body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"n":${BIG}}}}`,
    });
    const text = await response.text();
    expect(text).toContain(BIG);
    expect(text).not.toContain('9007199254740992');
    const duplicate = await fetch(served.url(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId as string,
        'mcp-protocol-version': '2025-06-18',
      },
      body: '{"jsonrpc":"2.0","id":10,"id":11,"method":"ping"}',
    });
    expect(duplicate.status).toBe(400);
    expect(await duplicate.text()).toMatch(/Duplicate key 'id'/);
    await client.close();
  });
});
