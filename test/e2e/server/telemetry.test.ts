// OpenTelemetry traces of a real `callgate serve`, exported over OTLP/HTTP (protobuf) to a real
// OTLP receiver: an HTTP server that decodes each ExportTraceServiceRequest with the generated
// code of the official opentelemetry-proto definitions (as shipped by @opentelemetry/
// otlp-transformer 0.57, built from opentelemetry-proto with protobufjs). The caller's trace
// context comes in on `traceparent` (HTTP API) and in `params._meta` (MCP).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallgateClient } from '@callgate/client';
import { type LedgerRecord, sealRecord } from '@callgate/core';
import { openDataDir } from '@callgate/store-sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, connectClient, eventually, PipeTransport } from '../gateway/harness.js';
import { BIN as CLI, type ServerProcess, startCallgate } from './harness.js';

const require = createRequire(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: protobufjs static code has no types here
const root: any = require('otlp-official-protobuf/build/src/generated/root.js');
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportTraceServiceResponse = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages (own properties are the fields present)
function anyValue(value: any): unknown {
  if (Object.hasOwn(value, 'stringValue')) return value.stringValue;
  if (Object.hasOwn(value, 'boolValue')) return value.boolValue;
  if (Object.hasOwn(value, 'intValue')) return Number(value.intValue);
  if (Object.hasOwn(value, 'doubleValue')) return value.doubleValue;
  if (Object.hasOwn(value, 'arrayValue')) return value.arrayValue.values.map(anyValue);
  return undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages
function attributesOf(list: any[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, anyValue(value)]));
}

let receiver: Server;
let endpoint: string;
const spans: ReceivedSpan[] = [];
const contentTypes = new Set<string>();
let server: ServerProcess;

const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 30s }
rules:
  - id: reads
    match: { tools: ["read_*", echo] }
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
`;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      contentTypes.add(String(request.headers['content-type']));
      const decoded = ExportTraceServiceRequest.decode(Buffer.concat(chunks));
      for (const resourceSpans of decoded.resourceSpans) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans)
          for (const span of scopeSpans.spans)
            spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              resource,
            });
      }
      const body = ExportTraceServiceResponse.encode({}).finish();
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(body));
    });
  });
  await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', () => ready()));
  endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  server = await startCallgate({
    keys: { bot: 'agent', dana: 'reviewer' },
    policy: POLICY,
    config: `upstreams:
  - name: everything
    stdio: { command: ${JSON.stringify(join(BIN, 'mcp-server-everything'))}, args: [stdio] }
tools:
  - name: send_invoice
    inputSchema: { type: object, properties: { to: { type: string }, amount: { type: number } }, required: [to, amount] }
`,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'callgate-e2e',
    },
  });
}, 60_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
  await new Promise<void>((done) => receiver?.close(() => done()));
}, 30_000);

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('OpenTelemetry traces over OTLP/HTTP', () => {
  it('makes the decision, approval wait and tool call spans children of the caller’s traceparent, each with its record’s digest', async () => {
    const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
    const agent = new CallgateClient({ url: server.url, apiKey: server.keys.bot ?? '' });
    const reviewer = new CallgateClient({ url: server.url, apiKey: server.keys.dana ?? '' });
    const run = await agent.startRun({ framework: 'otel-test' });
    const decided = await fetch(`${server.url}/v1/runs/${run.run_id}/decisions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.keys.bot}`,
        'content-type': 'application/json',
        traceparent,
      },
      body: JSON.stringify({
        calls: [{ id: 'inv-1', tool: 'send_invoice', arguments: { to: 'acme', amount: 9000 } }],
      }),
    });
    const verdict = (await decided.json()).verdicts[0];
    await reviewer.approve(verdict.approval.id, { reason: 'expected' });
    await agent.recordOutcome(run.run_id, { call_id: 'inv-1', outcome: 'ok', result: { sent: true } });

    const tool = await eventually(() => {
      const found = spans.find((span) => span.name === 'execute_tool send_invoice');
      expect(found).toBeDefined();
      return found as ReceivedSpan;
    }, 10_000);
    const request = spans.find((span) => span.spanId === tool.parentSpanId);
    expect(request).toMatchObject({
      name: 'POST /v1/runs/:id/decisions',
      traceId: TRACE_ID,
      parentSpanId: CALLER_SPAN,
    });
    expect(request?.kind).toBe(2); // SPAN_KIND_SERVER
    expect(tool.traceId).toBe(TRACE_ID);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'send_invoice',
      'gen_ai.tool.call.id': 'inv-1',
      'callgate.outcome': 'ok',
    });
    expect(tool.resource['service.name']).toBe('callgate-e2e');
    const guardrail = spans.find(
      (span) => span.parentSpanId === tool.spanId && span.name.startsWith('apply_guardrail'),
    );
    expect(guardrail?.attributes).toMatchObject({
      'gen_ai.operation.name': 'apply_guardrail',
      'callgate.decision.effect': 'ask',
      'callgate.decision.rules': ['large-invoices'],
    });
    const wait = await eventually(() => {
      const found = spans.find((span) => span.name === 'await_approval send_invoice');
      expect(found?.attributes['callgate.approval.status']).toBe('approved');
      return found as ReceivedSpan;
    }, 10_000);
    expect(wait.parentSpanId).toBe(tool.spanId);
    expect(wait.attributes['callgate.approval.reviewer']).toBe('dana');
    // No argument or result is in any span: only digests and commitments.
    expect(JSON.stringify(spans)).not.toContain('acme');

    // Each span's digest is that of its ledger record, what the run's next record names as `prev`
    // (the ledger stays the source of truth).
    const { store } = openDataDir(server.dataDir);
    try {
      const records = await store.readRunRecords(run.run_id);
      const digestOfType = (type: string) =>
        sealRecord(records.find((record) => record.type === type) as LedgerRecord).digest;
      expect(guardrail?.attributes['callgate.record.digest']).toBe(digestOfType('call-decision'));
      expect(tool.attributes['callgate.decision.digest']).toBe(digestOfType('call-decision'));
      expect(tool.attributes['callgate.call_end.digest']).toBe(digestOfType('call-end'));
      expect(wait.attributes['callgate.approval_response.digest']).toBe(digestOfType('approval-response'));
    } finally {
      await store.close();
    }
    expect([...contentTypes]).toEqual(['application/x-protobuf']);

    // The same server's metrics and readiness, as a scraper and a load balancer see them.
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toContain('callgate_decisions_total{effect="ask",rule="large-invoices",kind=""} 1');
    expect(text).toContain('callgate_upstream_up{upstream="everything"} 1');
    expect((await fetch(`${server.url}/v1/ready`)).status).toBe(200);
    expect(await (await fetch(`${server.url}/v1/health`)).json()).toMatchObject({ status: 'ok' });
  }, 30_000);

  it('takes the trace context of an MCP tool call from params._meta', async () => {
    const traceId = 'aaaabbbbccccddddeeeeffff00001111';
    const { client } = await connectClient(`${server.url}/mcp`, {
      headers: { authorization: `Bearer ${server.keys.bot}` },
    });
    try {
      const result = await client.callTool({
        name: 'echo',
        arguments: { message: 'traced' },
        _meta: { traceparent: `00-${traceId}-1111222233334444-01` },
      });
      expect(result.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    const tool = await eventually(() => {
      const found = spans.find((span) => span.name === 'execute_tool echo');
      expect(found?.attributes['callgate.outcome']).toBe('ok');
      return found as ReceivedSpan;
    }, 10_000);
    expect(tool.traceId).toBe(traceId);
  }, 30_000);

  it('exports the spans of callgate mcp --stdio too, parented on params._meta', async () => {
    const data = mkdtempSync(join(tmpdir(), 'callgate-otel-stdio-'));
    try {
      const child = spawn(
        process.execPath,
        [CLI, 'mcp', '--stdio', '--config', join(server.dir, 'callgate.yaml'), '--data', data],
        {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'callgate-stdio' },
        },
      );
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      await client.connect(new PipeTransport(child.stdout as never, child.stdin as never));
      const traceId = '99998888777766665555444433332222';
      const result = await client.callTool({
        name: 'echo',
        arguments: { message: 'over stdio' },
        _meta: { traceparent: `00-${traceId}-5555666677778888-01` },
      });
      expect(result.isError).not.toBe(true);
      await client.close();
      // Spans still buffered are exported on the way out.
      expect(await exited).toBe(0);
      const tool = spans.find(
        (span) => span.name === 'execute_tool echo' && span.resource['service.name'] === 'callgate-stdio',
      );
      expect(tool?.attributes).toMatchObject({ 'gen_ai.tool.name': 'echo', 'callgate.outcome': 'ok' });
      expect(tool).toMatchObject({ traceId, parentSpanId: '5555666677778888' });
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 30_000);
});
