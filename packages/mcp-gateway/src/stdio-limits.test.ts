// The size limit of stdio messages, both ways: a client's line over the limit is answered
// -32600 naming it and dropped as it comes; an upstream's answer over the limit ends its
// request at once with an error the call turns into a recorded tool-error.
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { jsonRpcLineFilter } from './jsonrpc-errors.js';
import {
  LosslessStdioServerTransport,
  UPSTREAM_ANSWER_TOO_LARGE,
  UpstreamReadBuffer,
} from './stdio-transport.js';

const LIMIT = 4_096;

/** A stdio server side as the gateway builds it: the line filter, then the transport. */
async function serverSide() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: string[] = [];
  stdout.on('data', (chunk: Buffer) => written.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const lines = stdin.pipe(jsonRpcLineFilter((line) => stdout.write(line), LIMIT));
  const transport = new LosslessStdioServerTransport(lines, stdout, LIMIT);
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  return { stdin, written, received };
}

const settle = () => new Promise((wake) => setImmediate(wake));

describe('stdio message size limit', () => {
  it('answers a client line over the limit -32600 naming the limit, addressed to its id, and serves the next line', async () => {
    const { stdin, written, received } = await serverSide();
    stdin.write('{"jsonrpc":"2.0","id":41,"method":"ping","params":{"pad":"');
    const chunk = 'x'.repeat(64 * 1024);
    for (let index = 0; index < 64; index++) stdin.write(chunk); // 4 MiB, 1,000 times the limit
    stdin.write('"}}\n{"jsonrpc":"2.0","id":42,"method":"ping"}\n');
    await settle();
    expect(written.map((line) => JSON.parse(line))).toEqual([
      {
        jsonrpc: '2.0',
        id: 41,
        error: {
          code: -32600,
          message: `Invalid Request: a message over the limit of ${LIMIT} bytes (discarded unread)`,
        },
      },
    ]);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 42, method: 'ping' }]);
  });

  it('answers to null when the id of the line over the limit cannot be read', async () => {
    const { stdin, written } = await serverSide();
    stdin.write(`{"params":{"pad":"${'y'.repeat(LIMIT)}"},"method":"ping","jsonrpc":"2.0","id":{"x":1}}\n`);
    await settle();
    expect(JSON.parse(written[0] ?? '{}')).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('ends the request an upstream answer over the limit was for with an error marked as the gateway’s', () => {
    const buffer = new UpstreamReadBuffer(LIMIT);
    buffer.append(Buffer.from(`{"result":{"content":[{"type":"text","text":"${'z'.repeat(LIMIT * 10)}"}]},`));
    expect(buffer.readMessage()).toBeNull();
    buffer.append(Buffer.from('"jsonrpc":"2.0","id":5}\n{"jsonrpc":"2.0","id":6,"result":{}}\n'));
    expect(buffer.readMessage()).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: {
        code: -32603,
        message: `the upstream answer is over the limit of ${LIMIT} bytes (discarded unread)`,
        data: { callgate: UPSTREAM_ANSWER_TOO_LARGE },
      },
    });
    expect(buffer.readMessage()).toEqual({ jsonrpc: '2.0', id: 6, result: {} });
    expect(buffer.readMessage()).toBeNull();
  });

  it('never takes an upstream request over the limit for an answer', () => {
    const buffer = new UpstreamReadBuffer(LIMIT);
    buffer.append(
      Buffer.from(
        `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"a":"${'q'.repeat(LIMIT)}"}}\n`,
      ),
    );
    expect(() => buffer.readMessage()).toThrow(`an upstream message over the limit of ${LIMIT} bytes`);
  });
});
