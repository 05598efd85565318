// A client that sends less body than it declared, then stops (408) or goes away, is the client's
// problem: the server logs it at info level, without a stack, never as a failure of its own.
import { connect } from 'node:net';
import type { Logger } from '@callgate/core';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startServer } from '../start.js';

interface Line {
  level: keyof Logger;
  fields: Record<string, unknown>;
  message: string;
}

function recordingLogger(lines: Line[]): Logger {
  const record = (level: keyof Logger) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, fields, message });
  return { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}

describe('a /v1 body the client does not finish', () => {
  it('is logged as the client’s problem (info, no stack), whether it stops or goes away (generated)', async () => {
    const lines: Line[] = [];
    const { app, keys } = await testApp({ logger: recordingLogger(lines) });
    const server = await startServer({
      app,
      port: 0,
      signals: [],
      headersTimeoutMs: 200,
      requestTimeoutMs: 200,
    });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('stops', 'goes away'),
          fc.constantFrom('close', 'keep-alive'),
          fc.constantFrom('/v1/runs', '/v1/verify'),
          fc.integer({ min: 1, max: 500 }),
          async (client, connection, path, sent) => {
            const before = lines.length;
            await new Promise<void>((resolve) => {
              const socket = connect(server.port, '127.0.0.1');
              socket.on('error', () => {});
              // Read what comes (a 408 or nothing), so that the end of the connection is seen.
              socket.resume();
              socket.on('close', () => resolve());
              socket.write(
                `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.admin}\r\nContent-Type: application/json\r\nConnection: ${connection}\r\nContent-Length: 1000\r\n\r\n${'a'.repeat(sent)}`,
                () => {
                  if (client === 'goes away') setTimeout(() => socket.destroy(), 20);
                },
              );
            });
            // The handler notices once the connection is gone; the test's timeout bounds the wait.
            while (!lines.slice(before).some((line) => line.message === 'request body not received'))
              await new Promise((resolve) => setTimeout(resolve, 10));
            const these = lines.slice(before);
            expect(these.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
            const noted = these.find((line) => line.message === 'request body not received');
            expect(noted?.level).toBe('info');
            expect(noted?.fields).toMatchObject({ method: 'POST', path });
            expect(String(noted?.fields.error)).toMatch(/^body: not received whole/);
            expect(JSON.stringify(noted?.fields)).not.toMatch(/\n\s+at /);
          },
        ),
        { numRuns: 8 },
      );
    } finally {
      await server.close();
    }
  });
});
