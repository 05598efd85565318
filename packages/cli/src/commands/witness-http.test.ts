// `callgate witness serve` over HTTP: the same limits on receiving a request as `callgate serve`.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logSignerFromPrivateKey } from '@callgate/core/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { callgate } from '../test-support.js';
import { startWitness } from './witness.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
const folder = () => {
  const path = mkdtempSync(join(tmpdir(), 'callgate-witness-http-'));
  folders.push(path);
  return path;
};
const logKey = logSignerFromPrivateKey('example.com/log', new Uint8Array(32).fill(3)).verifierKey;

/** Writes `text` on a raw connection to `url`, then collects all it receives until it closes. */
function rawExchange(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
    socket.write(text);
  });
}

describe('callgate witness serve: request time limits', () => {
  it('answers 408 and closes a connection whose body stops short, as callgate serve does', async () => {
    const witness = await startWitness({
      data: folder(),
      log: [logKey],
      headersTimeout: 200,
      requestTimeout: 200,
    });
    try {
      const answer = await rawExchange(
        witness.url,
        'POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nold 0\n',
      );
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect(answer).toContain(
        'the request was not received in time (headers within 200 ms, the whole request within 200 ms)',
      );
      const headers = await rawExchange(witness.url, 'POST /add-checkpoint HTTP/1.1\r\nHost: x\r\n');
      expect(headers.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    } finally {
      await witness.close();
    }
  });

  it('takes --request-timeout and --headers-timeout, refusing a headers timeout longer than the request’s', async () => {
    const refused = await callgate([
      'witness',
      'serve',
      '--data',
      folder(),
      '--log',
      logKey,
      '--headers-timeout',
      '40s',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.lines.join('\n')).toContain(
      "option '--headers-timeout <duration>' (40000 ms) cannot exceed option '--request-timeout <duration>' (30000 ms, its default)",
    );
    const help = await callgate(['witness', 'serve', '--help']);
    expect(help.lines.join('\n')).toMatch(/--request-timeout <duration>[\s\S]*default 30s/);
    expect(help.lines.join('\n')).toMatch(/--headers-timeout <duration>[\s\S]*default 10s/);
  });
});

describe('callgate witness serve: a body over its limit', () => {
  it('answers 413 to a client that writes its whole body before reading, declared or chunked', async () => {
    const witness = await startWitness({ data: folder(), log: [logKey] });
    const { port } = new URL(witness.url);
    const body = Buffer.alloc(3 * 1024 * 1024, 0x61);
    const exchange = (head: string, payload: Buffer) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        const received: Buffer[] = [];
        socket.pause();
        socket.on('error', reject);
        socket.on('data', (chunk) => received.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
        socket.write(head);
        socket.write(payload, () => socket.resume());
      });
    try {
      const declared = await exchange(
        `POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`,
        body,
      );
      expect(declared.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      const chunked = await exchange(
        'POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n',
        Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]),
      );
      expect(chunked.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      // The answer is the error JSON `callgate serve` and the witness's own 408 give.
      for (const answer of [declared, chunked]) {
        expect(answer).toContain('content-type: application/json; charset=utf-8');
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
          error: { kind: 'request-invalid', message: 'body: over the limit of 65536 bytes', path: 'body' },
        });
      }
      // Small chunks on a connection kept alive: the rest is drained as well (the reader that
      // stopped at the limit does not hold it paused).
      const pieces = Buffer.concat(
        Array.from({ length: 80 }, () =>
          Buffer.concat([
            Buffer.from(`${(16 * 1024).toString(16)}\r\n`),
            Buffer.alloc(16 * 1024, 0x61),
            Buffer.from('\r\n'),
          ]),
        ),
      );
      const small = await new Promise<string>((resolve, reject) => {
        const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
        const received: Buffer[] = [];
        socket.pause();
        socket.on('error', reject);
        socket.on('data', (chunk) => received.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
        socket.write('POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
        socket.write(pieces);
        socket.end('0\r\n\r\n', () => socket.resume());
      });
      expect(small.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    } finally {
      await witness.close();
    }
  });
});

describe('callgate witness serve: answers that are not the checkpoint’s', () => {
  it('are the error JSON: 404 for another path, 405 with Allow for another method', async () => {
    const witness = await startWitness({ data: folder(), log: [logKey] });
    try {
      const missing = await fetch(`${witness.url}/elsewhere`, { method: 'POST', body: 'x' });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await missing.json()).toEqual({
        error: { kind: 'not-found', message: 'no route POST /elsewhere' },
      });
      const wrongMethod = await fetch(`${witness.url}/add-checkpoint`);
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('POST');
      expect(await wrongMethod.json()).toEqual({
        error: {
          kind: 'request-invalid',
          message: 'method GET is not allowed on /add-checkpoint; allowed: POST',
        },
      });
    } finally {
      await witness.close();
    }
  });
});
