// MCP sessions are live protocol sessions held by one replica; when it is killed, the client
// re-initialises on a survivor (a survivor answers the old session id 404, as the MCP
// specification has it) and the gate's state is intact there: a call whose approval was asked on
// the dead replica and answered meanwhile runs under its outstanding grant, without asking again.
// Real PostgreSQL, real `callgate serve` processes, the real filesystem MCP server upstream.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallgateClient } from '@callgate/client';
import { afterAll, describe, expect, it } from 'vitest';
import { testPostgresUrl } from '../../postgres/database.js';
import { BIN, connectClient } from '../gateway/harness.js';
import { deploymentPerSuite } from './harness.js';

const url = testPostgresUrl();
const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 30s }
profiles:
  observe: [read_text_file, write_file]
rules:
  - id: reads
    match: { annotations: { readOnlyHint: true } }
    effect: allow
  - id: writes-need-a-person
    match: { tools: [write_file] }
    effect: ask
    reason: writing files needs a person
`;

describe.skipIf(url === undefined)('MCP sessions across replicas', () => {
  let folder: string;
  const suite = deploymentPerSuite(url as string, () => {
    folder = mkdtempSync(join(tmpdir(), 'callgate-replica-files-'));
    return {
      count: 2,
      keys: { agent: 'agent', rita: 'reviewer' },
      policy: POLICY,
      config: `upstreams:\n  - name: files\n    stdio: { command: ${JSON.stringify(join(BIN, 'mcp-server-filesystem'))}, args: [${JSON.stringify(folder)}] }\n`,
    };
  });

  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('re-initialise on a survivor with the approval answered meanwhile honoured, not asked again', async () => {
    const [first, second] = suite.deployment.replicas;
    if (!first || !second) throw new Error('two replicas expected');
    const headers = { Authorization: `Bearer ${suite.deployment.keys.agent}` };
    const { client, transport } = await connectClient(`${first.url}/mcp/observe`, { headers });
    const sessionId = transport.sessionId;
    const target = join(folder, 'approved.txt');
    const call = { name: 'write_file', arguments: { path: target, content: 'approved' } };
    const writing = client.callTool(call).then(
      () => 'answered',
      () => 'failed',
    );
    const reviewer = new CallgateClient({ url: second.url, apiKey: suite.deployment.keys.rita ?? '' });
    let pending: Awaited<ReturnType<CallgateClient['listApprovals']>> = [];
    for (let tries = 0; tries < 100 && pending.length === 0; tries++) {
      pending = await reviewer.listApprovals({ status: 'pending' });
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pending).toHaveLength(1);

    // The replica holding the session dies while the call waits; the reviewer answers on the other.
    await first.kill();
    // The call never got its answer: the client gives up on the dead session.
    await client.close().catch(() => {});
    expect(await writing).toBe('failed');
    expect(() => readFileSync(target, 'utf8')).toThrow();
    await reviewer.approve(pending[0]?.id ?? '', { reason: 'fine' });

    // The old session is unknown to the survivor: 404, and the client initialises a new one.
    const stale = await fetch(`${second.url}/mcp/observe`, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId ?? '',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
    });
    expect(stale.status).toBe(404);
    await stale.text();
    const again = await connectClient(`${second.url}/mcp/observe`, { headers });
    const written = await again.client.callTool(call);
    expect(written.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('approved');
    // One approval in all: the person was not asked twice.
    expect(await reviewer.listApprovals({})).toHaveLength(1);
    await again.client.close();
  }, 90_000);
});
