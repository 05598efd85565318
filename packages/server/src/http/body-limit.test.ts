import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startServer } from '../start.js';
import { testApp } from '../test-support.js';
import { DEFAULT_BODY_LIMIT } from './validation.js';

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

describe('body limits (hono/body-limit)', () => {
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
