import { connect } from 'node:net';
import { testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { startServer } from '../start.js';
import { requestTimeoutOptions } from './request-timeout.js';

/** Writes `text` on a raw connection to `port`, then collects all it receives until it closes. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
    socket.write(text);
  });
}

/** The status line and the JSON body of a raw HTTP/1.1 answer. */
function parsed(answer: string): { statusLine: string; body: unknown } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { statusLine: head.split('\r\n')[0] ?? '', body: JSON.parse(body) };
}

describe('request time limits', () => {
  it('answers 408 with the error JSON and closes a connection whose body stops short of its Content-Length', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({
      app,
      port: 0,
      signals: [],
      headersTimeoutMs: 300,
      requestTimeoutMs: 300,
    });
    try {
      const answer = await rawExchange(
        server.port,
        `POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.agent}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"framewo`,
      );
      const { statusLine, body } = parsed(answer);
      expect(statusLine).toBe('HTTP/1.1 408 Request Timeout');
      expect(body).toMatchObject({ error: { kind: 'request-invalid' } });
      expect((body as { error: { message: string } }).error.message).toContain('300 ms');
      // The server still answers others.
      const health = await fetch(`${server.url}/v1/health`);
      expect(health.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('answers 408 and closes a connection whose headers never end', async () => {
    const { app } = await testApp();
    const server = await startServer({
      app,
      port: 0,
      signals: [],
      headersTimeoutMs: 300,
      requestTimeoutMs: 5_000,
    });
    try {
      const answer = await rawExchange(server.port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: a');
      expect(parsed(answer).statusLine).toBe('HTTP/1.1 408 Request Timeout');
    } finally {
      await server.close();
    }
  });

  it('answers unparsable HTTP 400 with the error JSON', async () => {
    const { app } = await testApp();
    const server = await startServer({ app, port: 0, signals: [] });
    try {
      const { statusLine, body } = parsed(await rawExchange(server.port, 'NOT HTTP AT ALL\r\n\r\n'));
      expect(statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(body).toMatchObject({ error: { kind: 'request-invalid' } });
    } finally {
      await server.close();
    }
  });

  it('holds the head limit to the whole request limit and refuses limits that are not positive whole ms', () => {
    expect(requestTimeoutOptions({ headersTimeoutMs: 10_000, requestTimeoutMs: 300 })).toMatchObject({
      headersTimeout: 300,
      requestTimeout: 300,
    });
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => requestTimeoutOptions({ headersTimeoutMs: bad, requestTimeoutMs: 300 })).toThrow(
        /positive whole number/,
      );
  });
});
