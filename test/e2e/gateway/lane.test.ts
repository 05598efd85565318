// The tools/call lane (packages/mcp-gateway/src/call-lane.ts) and the lean upstream call
// (HttpClientTransport.call) against the SDK paths: two gateways in front of the same upstream
// (fidelity-upstream.mjs), one serving plain `tools/call` POSTs on the lane and reaching the
// upstream over Streamable HTTP, the other (`toolCallLane: false`) serving them through the MCP
// SDK's server transport and reaching the upstream over stdio through the SDK's client, are sent
// the same generated messages; their answers (the HTTP body, byte for byte) and their ledger
// records (with what differs between any two runs masked) must be the same.
// Then what only the lane does itself: cancellation by `notifications/cancelled` and by a
// dropped connection.
import { spawn } from 'node:child_process';
import type { LedgerRecord } from '@callgate/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type ServedGateway, serveGateway } from './harness.js';

const UPSTREAM = new URL('./fidelity-upstream.mjs', import.meta.url).pathname;

const POLICY = `
version: 1
default: deny
profiles:
  narrow: [echo]
rules:
  - id: small
    match: { tools: [bump] }
    when: args.amount <= 1000
    effect: allow
  - id: open
    match: { tools: [echo, boom, nan, hang] }
    effect: allow
`;

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

let lane: ServedGateway;
let sdk: ServedGateway;
let stopHttpUpstream = () => {};

/** The upstream over Streamable HTTP, in a process of its own: its URL. */
function httpUpstream(): Promise<string> {
  const child = spawn(process.execPath, [UPSTREAM], {
    env: { ...process.env, CALLGATE_TEST_HTTP: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  stopHttpUpstream = () => child.stdin.end();
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const port = /PORT (\d+)/.exec(seen)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}/mcp`);
    });
    child.once('exit', (code) => reject(new Error(`the HTTP upstream exited with ${code}`)));
  });
}

beforeAll(async () => {
  const url = await httpUpstream();
  [lane, sdk] = await Promise.all([
    serveGateway({ policy: POLICY, upstreams: [{ name: 'fid', http: { url }, timeoutMs: 10_000 }] }),
    serveGateway({
      policy: POLICY,
      upstreams: [{ name: 'fid', stdio: { command: process.execPath, args: [UPSTREAM] }, timeoutMs: 10_000 }],
      toolCallLane: false,
    }),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([lane?.close(), sdk?.close()]);
  stopHttpUpstream();
});

/** Opens a session on `served` (initialize, then initialized); returns its POST. */
async function session(served: ServedGateway, profile = 'full') {
  const url = served.url(profile === 'full' ? undefined : profile);
  const opened = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'lane', version: '1' } },
    }),
  });
  await opened.text();
  const id = opened.headers.get('mcp-session-id') ?? '';
  const post = (body: string, signal?: AbortSignal) =>
    fetch(url, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': id }, body, signal });
  (await post('{"jsonrpc":"2.0","method":"notifications/initialized"}')).body?.cancel();
  return post;
}

const seen = new Set<string>();

/** The records of the runs `served` started since the last look, with what differs between two engines masked. */
async function records(served: ServedGateway): Promise<unknown[]> {
  const all: LedgerRecord[] = [];
  for (const run of await served.engine.store.listRuns()) {
    if (seen.has(run.run_id)) continue;
    seen.add(run.run_id);
    all.push(...(await served.engine.store.readRunRecords(run.run_id)));
  }
  // Ids, times and chain links differ between any two runs; digests and commitments are keyed
  // or salted per engine.
  const masked = /^(run_id|call_id|record_id|id|ts|duration_ms|prev|seq|expires_at)$|_(digest|commitment)$/;
  const mask = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(mask);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, masked.test(key) ? typeof inner : mask(inner)]),
    );
  };
  return all.map(mask);
}

/** A tools/call's JSON text, with digits JSON.stringify could not write (big integers) kept. */
const toolCall = fc
  .record({
    id: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.string({ minLength: 1, maxLength: 8 })),
    name: fc.constantFrom('bump', 'echo', 'boom', 'nan', 'surrogate', 'format_disk'),
    amount: fc.oneof(fc.integer({ min: -5, max: 2_000 }), fc.constant(undefined)),
    data: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
    big: fc.option(fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }), { nil: undefined }),
    meta: fc.constantFrom(
      undefined,
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      { note: 'kept' },
      { progressToken: 7 },
    ),
  })
  .map(({ id, name, amount, data, big, meta }) => {
    const args: string[] = [];
    if (amount !== undefined) args.push(`"amount":${amount}`);
    if (data !== undefined) args.push(`"data":${JSON.stringify(data)}`);
    if (big !== undefined) args.push(`"big":${big}`);
    const params = `{"name":${JSON.stringify(name)},"arguments":{${args.join(',')}}${meta ? `,"_meta":${JSON.stringify(meta)}` : ''}}`;
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":${params}}`;
  });

/** How many calls of `hang` the lane's ledger shows ended as a `tool-error` (cancelled: it never answers). */
async function hangEnds(): Promise<number> {
  let count = 0;
  for (const run of await lane.engine.store.listRuns()) {
    for (const record of await lane.engine.store.readRunRecords(run.run_id)) {
      const end = record as { type: string; tool?: string; outcome?: string; error_kind?: string };
      if (
        end.type === 'call-end' &&
        end.tool === 'hang' &&
        end.outcome === 'error' &&
        end.error_kind === 'tool-error'
      )
        count++;
    }
  }
  return count;
}

describe('the tools/call lane', () => {
  it('answers generated calls exactly as the SDK path does, with the same records', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(toolCall, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('full', 'narrow'),
        async (calls, profile) => {
          const [onLane, onSdk] = await Promise.all([session(lane, profile), session(sdk, profile)]);
          for (const call of calls) {
            const [a, b] = await Promise.all([onLane(call), onSdk(call)]);
            expect(a.status).toBe(b.status);
            expect(a.headers.get('content-type')).toBe(b.headers.get('content-type'));
            expect(await a.text()).toBe(await b.text());
          }
          expect(await records(lane)).toEqual(await records(sdk));
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  it('ends a call the client cancels (notifications/cancelled) with no answer, recorded as cancelled', async () => {
    const post = await session(lane);
    const waiting = post(
      '{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"hang","arguments":{}}}',
    );
    await new Promise((wake) => setTimeout(wake, 50));
    const cancel = await post(
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"enough"}}',
    );
    expect(cancel.status).toBe(202);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(await answered.text()).not.toContain('slow-1');
    await eventually(async () => expect(await hangEnds()).toBe(1));
  });

  it('aborts a call whose client dropped the connection, and records it', async () => {
    const post = await session(lane);
    const drop = new AbortController();
    const waiting = post(
      '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"hang","arguments":{}}}',
      drop.signal,
    ).catch((error: unknown) => error);
    await new Promise((wake) => setTimeout(wake, 50));
    drop.abort();
    await waiting;
    await eventually(async () => expect(await hangEnds()).toBe(2));
  });
});
