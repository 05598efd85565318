import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClientTransport } from './http-client.js';

/** A self-signed certificate for 127.0.0.1 and its key, made for this test alone (trusted by nothing). */
const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUJXN7iEuxo7u3q+JWwfE9rMbNwH8wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwMzE2MjkxNVoYDzIxMjYxMTA5
MTYyOTE1WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATxEV/j8oYTG1VL8kDRe6IdutVZ4/1dNIqnwN4q6oXzcC4Vyy/sJ4V1
c++QFeIFiOV/3EEihfcbJt5O+9L9rgHro2QwYjAdBgNVHQ4EFgQU93zeHbvm7sM7
057a/BAdAhs91DkwHwYDVR0jBBgwFoAU93zeHbvm7sM7057a/BAdAhs91DkwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IA+fjED8ZH9uh6l8ZfvgVZaA6mxO4LR4e57hR8oSJJdHAiEA8q+Yd2PeomORFvoB
fJDeoZVcDKHhuCSfjbdmS1T2rTY=
-----END CERTIFICATE-----`;
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgrkSlT1aX2K3Bzm+8
lQW1UuQCQzfoSsgEKdOyrEfkuWKhRANCAATxEV/j8oYTG1VL8kDRe6IdutVZ4/1d
NIqnwN4q6oXzcC4Vyy/sJ4V1c++QFeIFiOV/3EEihfcbJt5O+9L9rgHr
-----END PRIVATE KEY-----`;

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

const servers: Server[] = [];
const transports: HttpClientTransport[] = [];
afterEach(async () => {
  for (const transport of transports.splice(0)) await transport.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

/** A raw upstream on 127.0.0.1 that hands every request, its body read, to `handler`. */
async function upstream(handler: Handler): Promise<URL> {
  const server = createServer((request, response) => {
    // The session's DELETE at close, and any GET stream: not what these tests look at.
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, Buffer.concat(chunks).toString('utf8'), response));
  });
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp?tenant=a`);
}

function transport(url: URL, headers: Record<string, string> = {}): HttpClientTransport {
  const client = new HttpClientTransport(url, headers);
  transports.push(client);
  return client;
}

/** Writes `bytes` in pieces cut at `cuts` (byte offsets), each its own write, then ends. */
async function writeInPieces(response: ServerResponse, bytes: Buffer, cuts: number[]): Promise<void> {
  let start = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    response.write(bytes.subarray(start, cut));
    start = cut;
    await new Promise((next) => setImmediate(next));
  }
  response.end(bytes.subarray(start));
}

describe('HttpClientTransport (undici POSTs)', () => {
  it('hands on an answer whole however its bytes are cut, inside a character included', async () => {
    let answer: { bytes: Buffer; cuts: number[]; eventStream: boolean } | undefined;
    const url = await upstream((_request, body, response) => {
      const { id } = JSON.parse(body) as { id: number | string };
      if (!answer) throw new Error('no answer set');
      const bytes = Buffer.from(answer.bytes.toString('utf8').replace('"ID"', JSON.stringify(id)), 'utf8');
      response.writeHead(200, {
        'content-type': answer.eventStream ? 'text/event-stream' : 'application/json',
      });
      void writeInPieces(
        response,
        bytes,
        answer.cuts.filter((cut) => cut < bytes.length),
      );
    });
    const client = transport(url);
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
        fc.array(fc.nat({ max: 200 }), { maxLength: 6 }),
        fc.boolean(),
        async (text, cuts, eventStream) => {
          const json = `{"jsonrpc":"2.0","id":"ID","result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]}}`;
          answer = {
            bytes: Buffer.from(eventStream ? `event: message\ndata: ${json}\n\n` : json, 'utf8'),
            cuts,
            eventStream,
          };
          const result = await client.call('tools/call', { name: 'echo' }, { timeoutMs: 5_000 });
          expect(result).toEqual({ content: [{ type: 'text', text }] });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('sends the configured headers, the session, the URL’s credentials and path, and the body as JSON', async () => {
    const seen: Array<{ method?: string; url?: string; headers: IncomingMessage['headers']; body: string }> =
      [];
    const url = await upstream((request, body, response) => {
      seen.push({ method: request.method, url: request.url, headers: request.headers, body });
      const { id } = JSON.parse(body) as { id: number | string };
      response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id, result: {} }));
    });
    url.username = 'us%20er';
    url.password = 'p%3Ass';
    const client = transport(url, { 'x-tenant': 'acme' });
    client.setProtocolVersion('2025-11-25');
    await client.call('tools/list', {}, { timeoutMs: 5_000 });
    await client.call('tools/list', {}, { timeoutMs: 5_000 });
    expect(seen).toHaveLength(2);
    const [first, second] = seen;
    expect(first?.method).toBe('POST');
    expect(first?.url).toBe('/mcp?tenant=a');
    expect(first?.headers).toMatchObject({
      'x-tenant': 'acme',
      'mcp-protocol-version': '2025-11-25',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Basic ${Buffer.from('us er:p:ss').toString('base64')}`,
      'content-length': String(Buffer.byteLength(first?.body ?? '')),
    });
    expect(first?.headers['mcp-session-id']).toBeUndefined();
    expect(second?.headers['mcp-session-id']).toBe('session-1');
    expect(JSON.parse(first?.body ?? '')).toMatchObject({ jsonrpc: '2.0', method: 'tools/list' });
  });

  it('rejects a call when the upstream refuses the connection, or closes it before answering', async () => {
    const closing = await upstream((request) => request.socket.destroy());
    await expect(
      transport(closing).call('tools/call', { name: 'echo' }, { timeoutMs: 5_000 }),
    ).rejects.toThrow();
    const refused = await upstream(() => {});
    const server = servers.pop();
    server?.closeAllConnections();
    await new Promise((done) => server?.close(done));
    await expect(
      transport(refused).call('tools/call', { name: 'echo' }, { timeoutMs: 5_000 }),
    ).rejects.toThrow(/ECONNREFUSED/);
  });

  it('speaks TLS to an https upstream and refuses a certificate nothing vouches for', async () => {
    let reached = false;
    const server = createTlsServer({ cert: SELF_SIGNED_CERT, key: SELF_SIGNED_KEY }, (_request, response) => {
      reached = true;
      response.writeHead(500).end();
    });
    servers.push(server);
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const url = new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    await expect(transport(url).call('tools/call', { name: 'echo' }, { timeoutMs: 5_000 })).rejects.toThrow(
      /self[- ]signed certificate/,
    );
    expect(reached).toBe(false);
  });
});
