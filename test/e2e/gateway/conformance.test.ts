// The MCP conformance suite (@modelcontextprotocol/conformance, run on Node 22 from the `node`
// package) against the test upstream directly and through the gateway: every scenario the
// upstream passes directly must pass through the gateway too. Also: upstream list changes
// reach the gateway's clients.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceUpstream, startConformanceUpstream } from './conformance-upstream.js';
import { connectClient, eventually, ROOT, type ServedGateway, serveGateway } from './harness.js';

// Node 22 from the npm package `node`, installed by scripts/setup.sh outside the workspace.
const NODE_22 = resolve(ROOT, 'tools/node22/node_modules/node/bin/node');
const CONFORMANCE = resolve(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

const POLICY = `
version: 1
default: deny
rules:
  - id: everything
    match: { tools: ["*"] }
    effect: allow
`;

/** Scenarios that cannot pass through a gateway (see docs/mcp-gateway.md); none so far. */
const GATEWAY_LIMITS: Record<string, string> = {};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Runs every server scenario (`--suite all`, pending ones too) against `url`; returns each one's checks. */
async function runSuite(url: string, output: string): Promise<Map<string, Check[]>> {
  const ran = await new Promise<{ error: Error | null; stderr: string }>((done) => {
    execFile(
      NODE_22,
      [CONFORMANCE, 'server', '--url', url, '--suite', 'all', '--output-dir', output],
      { timeout: 170_000 },
      (error, _stdout, stderr) => done({ error, stderr }),
    );
  });
  if (!existsSync(output)) {
    throw new Error(
      `the conformance suite wrote no results (${ran.error?.message ?? 'no error'}): ${ran.stderr.slice(-2000)}`,
    );
  }
  const scenarios = new Map<string, Check[]>();
  for (const entry of readdirSync(output)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    if (!match?.[1]) continue;
    scenarios.set(match[1], JSON.parse(readFileSync(join(output, entry, 'checks.json'), 'utf8')) as Check[]);
  }
  return scenarios;
}

const failures = (checks: Check[] | undefined) =>
  (checks ?? [{ id: 'missing', status: 'FAILURE' } as Check]).filter((check) => check.status === 'FAILURE');

let upstream: ConformanceUpstream;
let served: ServedGateway;
let output: string;

beforeAll(async () => {
  output = mkdtempSync(join(tmpdir(), 'callgate-conformance-'));
  upstream = await startConformanceUpstream();
  served = await serveGateway({
    policy: POLICY,
    upstreams: [{ name: 'conformance', http: { url: upstream.url } }],
    allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
  });
}, 30_000);

afterAll(async () => {
  await served?.close();
  await upstream?.close();
  rmSync(output, { recursive: true, force: true });
});

describe('MCP conformance through the gateway', () => {
  it('passes every server scenario the upstream passes directly', async () => {
    const [direct, gateway] = await Promise.all([
      runSuite(upstream.url, join(output, 'direct')),
      runSuite(served.url(), join(output, 'gateway')),
    ]);
    expect(direct.size).toBeGreaterThanOrEqual(32);
    const passedDirectly = [...direct]
      .filter(([, checks]) => failures(checks).length === 0)
      .map(([name]) => name);
    const successes = (checks: Check[] | undefined) =>
      (checks ?? []).filter((check) => check.status === 'SUCCESS').length;
    const broken = passedDirectly
      .filter((name) => !(name in GATEWAY_LIMITS))
      .map((name) => ({
        name,
        failures: failures(gateway.get(name)).map((check) => `${check.id}: ${check.errorMessage ?? ''}`),
        successes: `${successes(gateway.get(name))} of ${successes(direct.get(name))}`,
      }))
      .filter(
        (result) =>
          result.failures.length > 0 ||
          successes(gateway.get(result.name)) < successes(direct.get(result.name)),
      );
    expect(broken).toEqual([]);
    // The scenarios the upstream itself fails are worth knowing; none are expected.
    expect([...direct].filter(([, checks]) => failures(checks).length > 0).map(([name]) => name)).toEqual([]);
  }, 180_000);

  it('tells clients when an upstream tool list changes', async () => {
    const { client } = await connectClient(served.url());
    let notified = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified++;
    });
    // The standalone SSE stream (GET) carries notifications unrelated to a request.
    await new Promise((wake) => setTimeout(wake, 200));
    upstream.addTool('test_added_later');
    await eventually(() => expect(notified).toBeGreaterThan(0));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('test_added_later');
    const result = await client.callTool({ name: 'test_added_later', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'test_added_later ran' }]);
    await client.close();
  });

  it('resumes an upstream event stream the upstream closed mid-call (Last-Event-ID)', async () => {
    const { client } = await connectClient(served.url());
    const closed = upstream.streamsClosed();
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'Reconnection test completed' }]);
    expect(upstream.streamsClosed()).toBe(closed + 1);
    await client.close();
  });

  it('reconnects to an upstream that forgot its session (restarted)', async () => {
    const { client } = await connectClient(served.url());
    upstream.forgetSessions();
    const first = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(first.isError).toBe(true);
    await eventually(async () => {
      const again = await client.callTool({ name: 'test_simple_text', arguments: {} });
      expect(again.isError).toBeFalsy();
    }, 8_000);
    // The status settles once the reconnection that served the call has finished its bookkeeping.
    await eventually(() => expect(served.gateway.status()[0]?.status).toBe('connected'));
    await client.close();
  }, 15_000);
});
