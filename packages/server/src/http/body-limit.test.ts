import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { testApp } from '@callgate/testing/server';
import { serve } from '@hono/node-server';
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { startServer } from '../start.js';
import { limitBody, readUtf8 } from './body-limit.js';
import { DEFAULT_BODY_LIMIT } from './validation.js';

/**
 * POSTs `body` over a real connection, with a Content-Length, or chunked (no declared length)
 * in pieces of `piece` bytes; resolves with the status and the answer's text.
 */
function post(url: string, body: Buffer, chunked: boolean, piece: number) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const sent = httpRequest(url, {
      method: 'POST',
      headers: chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) },
    });
    sent.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    sent.once('error', reject);
    for (let start = 0; start < body.length; start += piece) sent.write(body.subarray(start, start + piece));
    sent.end();
  });
}

/** Sends only the headers of a POST declaring `length` bytes; resolves with the status and body. */
function declareOnly(url: string, headers: Record<string, string>, length: number) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const sent = httpRequest(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(length) },
    });
    sent.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, text });
        sent.destroy();
      });
    });
    sent.once('error', reject);
    sent.flushHeaders();
  });
}

describe('body limits', () => {
  it('hold every body, declared or chunked, to the limit, and hand the rest over whole', async () => {
    const limit = 64;
    const app = new Hono();
    app.post(
      '/echo',
      limitBody(limit, (c, error) => c.json(error.toBody(), 413)),
      async (c) => c.text(await readUtf8(c.req.raw, limit)),
    );
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.string({ unit: 'grapheme', maxLength: 40 }),
          fc.boolean(),
          fc.integer({ min: 1, max: 50 }),
          async (text, chunked, piece) => {
            const body = Buffer.from(text, 'utf8');
            const answer = await post(url, body, chunked, piece);
            if (body.length > limit) {
              expect(answer.status).toBe(413);
              expect(JSON.parse(answer.text).error.message).toBe(`body: over the limit of ${limit} bytes`);
            } else {
              expect(answer).toEqual({ status: 200, text });
            }
          },
        ),
        { numRuns: 60 },
      );
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a declared length over the limit is answered 413 before any byte of the body is sent', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({ app, port: 0, signals: [] });
    try {
      const headers = { authorization: `Bearer ${keys.agent}`, 'content-type': 'application/json' };
      const api = await declareOnly(`${server.url}/v1/runs`, headers, DEFAULT_BODY_LIMIT + 1);
      expect(api.status).toBe(413);
      expect(JSON.parse(api.text)).toEqual({
        error: {
          kind: 'request-invalid',
          message: `body: over the limit of ${DEFAULT_BODY_LIMIT} bytes`,
          path: 'body',
        },
      });
      // The UI's forms have their own, smaller limit, and answer with the error page.
      const form = await declareOnly(
        `${server.url}/ui/sign-in`,
        { 'content-type': 'application/x-www-form-urlencoded' },
        64 * 1024 + 1,
      );
      expect(form.status).toBe(413);
      expect(form.text).toContain('body: over the limit of 65536 bytes');
    } finally {
      await server.close();
    }
  });

  it('a route with its own limit takes a body over the default one (verify: a 2 MiB bundle)', async () => {
    const { call, keys } = await testApp();
    const big = { format: 'callgate-bundle/2', padding: 'x'.repeat(2 * 1024 * 1024) };
    const verified = await call('POST', '/v1/verify', { key: keys.agent, body: big });
    expect(verified.status).not.toBe(413);
    const refused = await call('POST', '/v1/runs', { key: keys.agent, body: big });
    expect(refused.status).toBe(413);
  });
});
