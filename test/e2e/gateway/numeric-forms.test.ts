// The gateway's edges, from outside, on HTTP (the tools/call lane and the SDK path) and stdio:
// request ids and progress tokens of every numeric form (JSON-RPC 2.0 §4: an id with a fraction
// is refused, naming "id"; MCP: a progress token is any string or number, relayed as sent), an
// upstream's JSON-RPC error passed on with its code, message and data, numbers of a result kept
// by value (and -0 with its sign), and the size limit of a message on both transports.
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingUpstream, type ServedGateway, serveGateway } from './harness.js';

const RAW_UPSTREAM = new URL('./raw-upstream.mjs', import.meta.url).pathname;
const LIMIT = 256 * 1024;

const POLICY = `
version: 1
default: deny
rules:
  - id: all
    match: { tools: [echo, trigger-long-running-operation, fail, numbers] }
    effect: allow
`;

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

let served: ServedGateway;

beforeAll(async () => {
  served = await serveGateway({
    policy: POLICY,
    upstreams: [
      everythingUpstream(),
      { name: 'raw', stdio: { command: process.execPath, args: [RAW_UPSTREAM] }, timeoutMs: 10_000 },
    ],
    maxBodyBytes: LIMIT,
  });
}, 60_000);

afterAll(async () => {
  await served?.close();
});

/** An HTTP session: a function POSTing raw text, resolving with the status and the body. */
async function httpSession() {
  const url = served.url();
  const opened = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"edges","version":"1"}}}',
  });
  await opened.text();
  const id = opened.headers.get('mcp-session-id') ?? '';
  const post = async (body: string) => {
    const answer = await fetch(url, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': id }, body });
    return { status: answer.status, text: await answer.text() };
  };
  await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  return post;
}

/** A stdio session: sends raw lines, reads the raw lines written back, in order. */
async function stdioSession() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  await served.gateway.connectStdio({ principal: 'desk', profile: 'full' }, { stdin, stdout });
  const lines: string[] = [];
  let buffer = '';
  stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let index = buffer.indexOf('\n'); index >= 0; index = buffer.indexOf('\n')) {
      lines.push(buffer.slice(0, index));
      buffer = buffer.slice(index + 1);
    }
  });
  let read = 0;
  /** Sends `text` and resolves with the lines written back up to the first answer (a message with result or error). */
  const exchange = async (text: string): Promise<string[]> => {
    stdin.write(`${text}\n`);
    for (let waited = 0; waited < 10_000; waited += 5) {
      const end = lines
        .slice(read)
        .findIndex((line) => /"(result|error)":/.test(line) && !line.includes('"method"'));
      if (end >= 0) {
        const got = lines.slice(read, read + end + 1);
        read += end + 1;
        return got;
      }
      await new Promise((wake) => setTimeout(wake, 5));
    }
    throw new Error(`no answer to ${text.slice(0, 200)}`);
  };
  await exchange(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"edges","version":"1"}}}',
  );
  stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return { exchange, close: () => stdin.end() };
}

/** The JSON-RPC messages of an HTTP body (event stream `data:` lines, or one JSON value), read losslessly. */
function messagesIn(body: string): Array<Record<string, unknown>> {
  const events = /^(event|data):/m.test(body)
    ? body
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
    : [body];
  return events
    .filter((event) => event.trim() !== '')
    .map((event) => parseLossless(event) as Record<string, unknown>);
}

/** A number's exact value scaled by 10^60 (compares spellings by value); its text for a string. */
function exactValue(token: unknown): string {
  if (typeof token === 'string') return JSON.stringify(token);
  const text = isLosslessNumber(token) ? token.value : String(token);
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (!match) throw new Error(`not a number: ${text}`);
  const fraction = match[3] ?? '';
  const power = Number(match[4] ?? 0) - fraction.length + 60;
  const magnitude = BigInt(`${match[2]}${fraction}`);
  const value = power >= 0 ? magnitude * 10n ** BigInt(power) : magnitude / 10n ** BigInt(-power);
  return `${match[1] && value !== 0n ? '-' : ''}${value}`;
}

/** A number token in one of its many spellings, and whether it is an integer. */
const numberToken = fc.oneof(
  fc.constantFrom(
    { text: '12345678901234567890', integer: true },
    { text: '-98765432109876543210', integer: true },
    { text: '1e2', integer: true },
    { text: '1.0', integer: true },
    { text: '1E400', integer: true },
    { text: '-0', integer: true },
    { text: '1.5', integer: false },
    { text: '1e-400', integer: false },
    { text: '1000.00000000000001', integer: false },
    { text: '-2.5e-1', integer: false },
  ),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map((value) => ({ text: String(value), integer: true })),
  fc
    .tuple(fc.integer({ min: 1, max: 999_999 }), fc.integer({ min: 1, max: 9 }))
    .map(([value, digit]) => ({ text: `${value}.${digit}`, integer: false })),
);

const ping = (id: string, token: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"_meta":{"progressToken":${token}}}}`;
const echo = (id: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`;

describe('ids of every numeric form', () => {
  it('answers an integer id with its value and refuses any other naming "id", on HTTP and stdio alike', async () => {
    const post = await httpSession();
    const stdio = await stdioSession();
    await fc.assert(
      fc.asyncProperty(numberToken, fc.boolean(), async ({ text, integer }, asPing) => {
        const message = asPing ? ping(text, '"t"') : echo(text);
        const overHttp = await post(message);
        const [overStdio] = (await stdio.exchange(message)).slice(-1);
        const answers = [
          ...messagesIn(overHttp.text),
          parseLossless(overStdio ?? '') as Record<string, unknown>,
        ];
        if (!integer) {
          expect(overHttp.status).toBe(400);
          for (const answer of answers) {
            expect(answer.id).toBeNull();
            expect((answer.error as { message: string }).message).toMatch(
              /^Invalid Request: "id" must be a string or an integer, got /,
            );
          }
          return;
        }
        expect(overHttp.status).toBe(200);
        const replies = answers.filter((answer) => 'result' in answer);
        expect(replies).toHaveLength(2);
        for (const reply of replies) expect(exactValue(reply.id)).toBe(exactValue(parseLossless(text)));
      }),
      { numRuns: 30 },
    );
    stdio.close();
  }, 120_000);
});

describe('progress tokens of every numeric form', () => {
  it('accepts them and relays progress with the token as sent, on HTTP and stdio alike', async () => {
    const post = await httpSession();
    const stdio = await stdioSession();
    let id = 100;
    await fc.assert(
      fc.asyncProperty(numberToken, async ({ text }) => {
        const call = `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":0.02,"steps":2},"_meta":{"progressToken":${text}}}}`;
        const overHttp = messagesIn((await post(call)).text);
        const overStdio = (await stdio.exchange(call)).map(
          (line) => parseLossless(line) as Record<string, unknown>,
        );
        for (const messages of [overHttp, overStdio]) {
          const progress = messages.filter((message) => message.method === 'notifications/progress');
          expect(progress.length).toBeGreaterThanOrEqual(2);
          for (const notice of progress) {
            const token = (notice.params as { progressToken: unknown }).progressToken;
            expect(exactValue(token)).toBe(exactValue(parseLossless(text)));
          }
          expect(messages.at(-1)).toMatchObject({ result: expect.any(Object) });
        }
        const answered = messagesIn((await post(ping(String(++id), text))).text);
        expect(answered).toEqual([expect.objectContaining({ result: {} })]);
      }),
      { numRuns: 12 },
    );
    stdio.close();
  }, 120_000);
});

describe('an upstream’s JSON-RPC error', () => {
  it('reaches the client as that error, with its code, message and data digits, and is recorded as a tool-error', async () => {
    const post = await httpSession();
    const stdio = await stdioSession();
    const call = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fail","arguments":{}}}';
    const expected = '"error":{"code":-32000,"message":"boom","data":{"big":12345678901234567890}}';
    expect((await post(call)).text).toContain(expected);
    expect((await stdio.exchange(call)).at(-1)).toContain(expected);
    stdio.close();
    const ends = [];
    for (const run of await served.engine.store.listRuns())
      for (const record of await served.engine.store.readRunRecords(run.run_id))
        if (record.type === 'call-end' && (record as { tool?: string }).tool === 'fail') ends.push(record);
    expect(ends).toHaveLength(2);
    for (const end of ends) expect(end).toMatchObject({ outcome: 'error', error_kind: 'tool-error' });
  });
});

describe('numbers of an upstream result', () => {
  it('reach the client with their values, -0 with its sign', async () => {
    const post = await httpSession();
    const stdio = await stdioSession();
    const call = '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"numbers","arguments":{}}}';
    const expected = '"structuredContent":{"f":1.1,"g":100,"h":-0}';
    expect((await post(call)).text).toContain(expected);
    expect((await stdio.exchange(call)).at(-1)).toContain(expected);
    stdio.close();
    // Committed as before the sign was kept (canonical JSON, RFC 8785, writes -0 as 0): no marker.
    const ends = [];
    for (const run of await served.engine.store.listRuns())
      for (const record of await served.engine.store.readRunRecords(run.run_id))
        if (record.type === 'call-end' && (record as { tool?: string }).tool === 'numbers') ends.push(record);
    expect(ends).toHaveLength(2);
    for (const end of ends) expect(end).not.toHaveProperty('result_normalized');
  });
});

describe('the size limit of a message', () => {
  it('refuses a stdio line over maxBodyBytes with -32600 naming the limit, then serves the next, and HTTP answers 413 naming it', async () => {
    const stdio = await stdioSession();
    const huge = `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"${'x'.repeat(4 * LIMIT)}"}}`;
    const [refused] = await stdio.exchange(huge);
    expect(JSON.parse(refused ?? '{}')).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: {
        code: -32600,
        message: `Invalid Request: a message over the limit of ${LIMIT} bytes (discarded unread)`,
      },
    });
    expect(
      JSON.parse((await stdio.exchange('{"jsonrpc":"2.0","id":10,"method":"ping"}'))[0] ?? '{}'),
    ).toEqual({
      jsonrpc: '2.0',
      id: 10,
      result: {},
    });
    stdio.close();
    const post = await httpSession();
    const tooLarge = await post(huge);
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.text).error.message).toBe(
      `Payload Too Large: the body is over the limit of ${LIMIT} bytes`,
    );
  });
});
