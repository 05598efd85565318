import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClientTransport } from './http-client.js';
import { UPSTREAM_ANSWER_TOO_LARGE } from './stdio-transport.js';

const LIMIT = 2048;
/** How the upstream answers the next request: as JSON or as an event stream, with `padding` bytes of result. */
let answer: { stream: boolean; padding: number } = { stream: false, padding: 0 };
let server: Server;
let url: URL;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      // Only requests are answered: a DELETE on close, a notification, get nothing to read.
      const id = request.method === 'POST' ? (JSON.parse(body) as { id?: string }).id : undefined;
      if (id === undefined) {
        response.writeHead(request.method === 'POST' ? 202 : 405).end();
        return;
      }
      const message = JSON.stringify({ jsonrpc: '2.0', id, result: { text: 'a'.repeat(answer.padding) } });
      if (answer.stream) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`event: message\ndata: ${message}\n\n`);
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(message);
      }
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

describe('an HTTP upstream answer over the size limit', () => {
  it('fails its call at once with the limit named, as JSON or as one event; one within it is read (generated)', async () => {
    const transport = new HttpClientTransport(url, {}, LIMIT);
    try {
      await fc.assert(
        fc.asyncProperty(fc.boolean(), fc.integer({ min: 0, max: 3 * LIMIT }), async (stream, padding) => {
          answer = { stream, padding };
          const size = JSON.stringify({
            jsonrpc: '2.0',
            id: 'callgate-1',
            result: { text: 'a'.repeat(padding) },
          }).length;
          // An event's bytes include its `event:` and `data:` lines.
          const read = stream ? size + 'event: message\ndata: \n\n'.length : size;
          const outcome = await transport.call('tools/call', {}, { timeoutMs: 5_000 }).then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
          if (read <= LIMIT - 10) expect(outcome).toEqual({ result: { text: 'a'.repeat(padding) } });
          else if (read > LIMIT + 10) {
            expect('error' in outcome && outcome.error).toBeInstanceOf(McpError);
            const error = (outcome as { error: McpError }).error;
            expect(error.message).toBe(
              `MCP error -32603: the upstream answer is over the limit of ${LIMIT} bytes (discarded unread)`,
            );
            expect(error.data).toEqual({ callgate: UPSTREAM_ANSWER_TOO_LARGE });
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      await transport.close();
    }
  });
});
