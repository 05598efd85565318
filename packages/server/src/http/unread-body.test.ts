import { connect } from 'node:net';
import { createGateway } from '@callgate/mcp-gateway';
import { memoryEngine, testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { createApiKey } from '../keys.js';
import { startServer } from '../start.js';

/**
 * Writes a request with a body of `size` bytes and `Connection: close` on a raw connection, the
 * whole body before reading anything (as Python's urllib does), then reads the answer until the
 * connection closes. Rejects on a reset or a broken pipe.
 */
function writeAllThenRead(port: number, path: string, key: string, size: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.pause();
    socket.on('error', reject);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${size}\r\n\r\n`,
    );
    socket.write(Buffer.alloc(size, 0x61), () => socket.resume());
  });
}

/**
 * POSTs a chunked body (`Transfer-Encoding: chunked`, no Content-Length) of `pieces` chunks of
 * `piece` bytes on a raw connection kept alive, writing every chunk before reading anything (as
 * Python's `http.client` does with `encode_chunked=True`), then ends its side and reads the answer
 * until the connection closes. Rejects on a reset or a broken pipe.
 */
function chunkedWriteAllThenRead(
  port: number,
  path: string,
  headers: Record<string, string>,
  piece: number,
  pieces: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    socket.pause();
    socket.on('error', reject);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\n${head}Transfer-Encoding: chunked\r\n\r\n`);
    const chunk = Buffer.concat([
      Buffer.from(`${piece.toString(16)}\r\n`),
      Buffer.alloc(piece, 0x61),
      Buffer.from('\r\n'),
    ]);
    let sent = 0;
    const writeMore = () => {
      while (sent < pieces) {
        sent += 1;
        if (!socket.write(chunk)) return void socket.once('drain', writeMore);
      }
      socket.end('0\r\n\r\n', () => socket.resume());
    };
    writeMore();
  });
}

describe('a body answered before it was read', () => {
  it('is drained when chunked and over the limit, on /v1 and /mcp, so the client gets the 413 (generated)', async () => {
    const { engine, publicKey } = await memoryEngine();
    const gateway = createGateway({ engine, upstreams: [] });
    await gateway.start();
    const app = createApp({ engine, publicKey, gateway });
    const { key } = await createApiKey(engine.store, { role: 'agent', name: 'bot' });
    // Short enough that a body left unread fails the test (a cut connection) well within its timeout.
    const server = await startServer({ app, port: 0, signals: [], requestTimeoutMs: 2_000 });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('/v1/runs', '/mcp'),
          fc.integer({ min: 4 * 1024, max: 64 * 1024 }),
          fc.integer({ min: 5 * 1024 * 1024, max: 8 * 1024 * 1024 }),
          async (path, piece, size) => {
            const headers = {
              Authorization: `Bearer ${key}`,
              'Content-Type': 'application/json',
              Accept: 'application/json, text/event-stream',
            };
            const answer = await chunkedWriteAllThenRead(
              server.port,
              path,
              headers,
              piece,
              Math.ceil(size / piece),
            );
            expect(answer.split('\r\n')[0], `${path} ${piece}`).toBe('HTTP/1.1 413 Payload Too Large');
            expect(answer).toMatch(/over the limit of \d+ bytes/);
          },
        ),
        { numRuns: 6 },
      );
    } finally {
      await server.close();
    }
  });

  it('still reaches a client that writes its whole body before reading: 413, 401, 404 (generated)', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({ app, port: 0, signals: [] });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            // Over the route's limit (1 MiB + 64 KiB): answered before any byte is read.
            fc.record({
              path: fc.constant('/v1/runs'),
              key: fc.constantFrom('agent', 'none'),
              size: fc.integer({ min: 2 * 1024 * 1024, max: 40 * 1024 * 1024 }),
              status: fc.constant(413),
            }),
            // Within the limit, but refused before it is read: no key, or no such path.
            fc.record({
              path: fc.constant('/v1/runs'),
              key: fc.constant('none'),
              size: fc.integer({ min: 256 * 1024, max: 1024 * 1024 }),
              status: fc.constant(401),
            }),
            fc.record({
              path: fc.constant('/nowhere'),
              key: fc.constant('agent'),
              size: fc.integer({ min: 256 * 1024, max: 40 * 1024 * 1024 }),
              status: fc.constant(404),
            }),
          ),
          async ({ path, key, size, status }) => {
            const token = key === 'none' ? `cg_${'x'.repeat(43)}` : keys.agent;
            const answer = await writeAllThenRead(server.port, path, token, size);
            expect(answer.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
          },
        ),
        { numRuns: 8 },
      );
    } finally {
      await server.close();
    }
  });

  it('closes, after the answer, a connection whose body stops short, within the request timeout', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({
      app,
      port: 0,
      signals: [],
      headersTimeoutMs: 300,
      requestTimeoutMs: 300,
    });
    try {
      for (const connection of ['close', 'keep-alive']) {
        const answer = await new Promise<string>((resolve) => {
          const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
          const received: Buffer[] = [];
          let trickle: ReturnType<typeof setInterval> | undefined;
          // Once answered, the client keeps sending a byte now and then: the server, not the
          // client, ends the connection (a write then fails), and the test's own timeout is the
          // bound when it does not.
          socket.on('end', () => {
            trickle = setInterval(() => socket.write('x'), 50);
          });
          socket.on('error', () => {});
          socket.on('data', (chunk) => received.push(chunk));
          socket.on('close', () => {
            clearInterval(trickle);
            resolve(Buffer.concat(received).toString('utf8'));
          });
          socket.write(
            `POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.agent}\r\nConnection: ${connection}\r\nContent-Length: 10000000\r\n\r\nabc`,
          );
        });
        expect(answer.split('\r\n')[0], connection).toBe('HTTP/1.1 413 Payload Too Large');
      }
    } finally {
      await server.close();
    }
  });
});
