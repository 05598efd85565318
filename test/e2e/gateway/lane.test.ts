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
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCallEnds } from '../../conformance/generated/checks.js';
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
    match: { tools: [echo, boom, nan, hang, big, dupkey, huge] }
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

/**
 * A request id as raw JSON text — a safe integer, a string, an integer beyond ±2^53 (digits a
 * double cannot hold), an integer spelled with a fraction or an exponent, a number with a
 * fraction — and the id the answer carries, as raw JSON text: the value of an integer a double
 * holds, the digits as sent of one it cannot, null for an id with a fraction (refused, -32600).
 */
const idText = fc.oneof(
  fc.integer({ min: 1, max: 1_000_000 }).map(String),
  fc.string({ minLength: 1, maxLength: 8 }).map((text) => JSON.stringify(text)),
  fc.bigInt({ min: 2n ** 53n + 1n, max: 10n ** 30n }).map(String),
  fc.bigInt({ min: -(10n ** 30n), max: -(2n ** 53n) - 1n }).map(String),
  fc.constantFrom('1e2', '1.0', '-0', '1E400', '1.5', '1e-400', '1000.00000000000001', '-2.5e-1'),
);

/** The id an answer to a request with id `text` carries (see {@link idText}). */
function answeredId(text: string): string {
  if (text.startsWith('"')) return text;
  if (['1.5', '1e-400', '1000.00000000000001', '-2.5e-1'].includes(text)) return 'null';
  const value = Number(text);
  return Number.isSafeInteger(value) ? String(value) : text;
}

/**
 * A tools/call's JSON text, with digits JSON.stringify could not write (big integers, in the id
 * and the arguments) kept, and what the answer must quote: the id as sent, and for `big` (which
 * returns its `digits` argument as bare numbers) those digits.
 */
const toolCall = fc
  .record({
    id: idText,
    name: fc.constantFrom('bump', 'echo', 'boom', 'nan', 'dupkey', 'big', 'surrogate', 'format_disk'),
    digits: fc.bigInt({ min: 2n ** 53n + 1n, max: 10n ** 30n }).map(String),
    amount: fc.oneof(fc.integer({ min: -5, max: 2_000 }), fc.constant(undefined)),
    data: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
    big: fc.option(fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }), { nil: undefined }),
    meta: fc.constantFrom(
      undefined,
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      { note: 'kept' },
      { progressToken: 7 },
      { progressToken: 1.5 },
      { progressToken: -0.25 },
    ),
  })
  .map(({ id, name, digits, amount, data, big, meta }) => {
    const args: string[] = name === 'big' ? [`"digits":"${digits}"`] : [];
    if (amount !== undefined) args.push(`"amount":${amount}`);
    if (data !== undefined) args.push(`"data":${JSON.stringify(data)}`);
    if (big !== undefined) args.push(`"big":${big}`);
    const params = `{"name":${JSON.stringify(name)},"arguments":{${args.join(',')}}${meta ? `,"_meta":${JSON.stringify(meta)}` : ''}}`;
    return {
      text: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`,
      id,
      quotes: name === 'big' ? `"n":${digits},"list":[-${digits},1]` : undefined,
    };
  });

/**
 * The JSON-RPC responses in an answer's body (event stream `data:` lines, or JSON: one message or
 * a batch), each as `<id as raw JSON text> result|error`, sorted; read losslessly, so ids compare
 * digit for digit.
 */
function answersIn(body: string): string[] {
  const events = /^(event|data):/m.test(body)
    ? body
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
    : [body];
  return events
    .filter((event) => event.trim() !== '')
    .flatMap((event) => {
      const value = parseLossless(event) as unknown;
      return (Array.isArray(value) ? value : [value]) as Array<Record<string, unknown>>;
    })
    .filter((message) => 'result' in message || 'error' in message)
    .map((message) => {
      const id = isLosslessNumber(message.id) ? message.id.value : JSON.stringify(message.id);
      return `${id} ${'error' in message ? `error${(message.error as { code?: { value?: string } }).code?.value === '-32600' ? ':-32600' : ''}` : 'result'}`;
    })
    .sort();
}

/** Ids from a small pool, so a batch repeats some: numbers, strings, "1" beside 1, digits beyond 2^53. */
const batchId = fc.constantFrom('1', '2', '"1"', '"a"', '12345678901234567890', '-98765432109876543210');

/** A JSON-RPC batch of tools/call requests (some sharing ids) and notifications. */
const batch = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ id: batchId, name: fc.constantFrom('echo', 'bump', 'big', 'dupkey') }),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  ),
  { minLength: 1, maxLength: 6 },
);

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
            const [a, b] = await Promise.all([onLane(call.text), onSdk(call.text)]);
            expect(a.status).toBe(b.status);
            expect(a.headers.get('content-type')).toBe(b.headers.get('content-type'));
            const text = await a.text();
            expect(text).toBe(await b.text());
            // The id as sent (a body the lossless reader refuses, a `prototype` key say, is a
            // parse error: id null), and the upstream's digits when its answer reached the client.
            const id = a.status === 400 && text.includes('"code":-32700') ? 'null' : answeredId(call.id);
            expect(answersIn(text).map((answer) => answer.slice(0, answer.lastIndexOf(' ')))).toEqual([id]);
            if (call.quotes && text.includes('"structuredContent":{"n"')) expect(text).toContain(call.quotes);
          }
          expect(await records(lane)).toEqual(await records(sdk));
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  it('answers every request of a generated batch once: those sharing an id each with -32600 and undecided, the rest run', async () => {
    await fc.assert(
      fc.asyncProperty(batch, async (items) => {
        const text = `[${items
          .map((item, index) =>
            item
              ? `{"jsonrpc":"2.0","id":${item.id},"method":"tools/call","params":{"name":"${item.name}","arguments":{"amount":${index}}}}`
              : '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"none","progress":1}}',
          )
          .join(',')}]`;
        const requests = items.filter((item) => item !== undefined);
        const uses = (id: string) => requests.filter((item) => item.id === id).length;
        const expected = requests
          .map((item) => `${item.id} ${uses(item.id) > 1 ? 'error:-32600' : 'result'}`)
          .sort();
        const decided = requests.filter((item) => uses(item.id) === 1).length;
        await Promise.all([records(lane), records(sdk)]); // what earlier runs left
        for (const served of [lane, sdk]) {
          const post = await session(served);
          const answer = await post(text);
          expect(answersIn(await answer.text())).toEqual(expected);
        }
        const [onLane, onSdk] = [await records(lane), await records(sdk)];
        expect(onLane).toEqual(onSdk);
        const decisions = (onLane as Array<{ type: string }>).filter(
          (record) => record.type === 'call-decision',
        );
        expect(decisions).toHaveLength(decided);
      }),
      { numRuns: 25 },
    );
    // The ledgers as written (not masked): every decided call ends exactly once.
    for (const served of [lane, sdk])
      for (const run of await served.engine.store.listRuns())
        checkCallEnds((await served.engine.store.readRunRecords(run.run_id)) as LedgerRecord[]);
  }, 120_000);

  it('fails a call whose upstream answer is over the size limit, over HTTP as over stdio: the same answer and records, a tool-error naming the limit', async () => {
    const [onLane, onSdk] = await Promise.all([session(lane), session(sdk)]);
    const call = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"huge","arguments":{}}}';
    const [a, b] = await Promise.all([onLane(call), onSdk(call)]);
    const text = await a.text();
    expect(text).toBe(await b.text());
    expect(text).toContain('the upstream answer is over the limit of 16777216 bytes (discarded unread)');
    const [onTheLane, throughSdk] = [await records(lane), await records(sdk)];
    expect(onTheLane).toEqual(throughSdk);
    expect(onTheLane).toContainEqual(
      expect.objectContaining({ type: 'call-end', tool: 'huge', outcome: 'error', error_kind: 'tool-error' }),
    );
  }, 60_000);

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

  it('refuses a request reusing the id of a call still in progress (-32600), on the lane and through the SDK, and frees the id once the call ends', async () => {
    const id = '12345678901234567890';
    const call = (name: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{}}}`;
    for (const served of [lane, sdk]) {
      const post = await session(served);
      const drop = new AbortController();
      const waiting = post(call('hang'), drop.signal).catch((error: unknown) => error);
      await new Promise((wake) => setTimeout(wake, 100));
      for (const again of [call('echo'), `{"jsonrpc":"2.0","id":${id},"method":"ping"}`]) {
        const refused = await post(again);
        expect(answersIn(await refused.text()), `${served === lane ? 'lane' : 'sdk'}: ${again}`).toEqual([
          `${id} error:-32600`,
        ]);
      }
      const cancel = await post(
        `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id},"reason":"enough"}}`,
      );
      expect(cancel.status).toBe(202);
      await eventually(async () => {
        const free = await post(call('echo'));
        expect(answersIn(await free.text())).toEqual([`${id} result`]);
      });
      // The SDK's transport may keep a cancelled request's stream open: the client leaves it.
      drop.abort();
      await waiting;
    }
  });
});
