import { connect } from 'node:net';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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

describe('a body answered before it was read', () => {
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
