import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BODY_LIMIT } from './validation.js';

const ENCODERS: Record<string, (bytes: Uint8Array) => Uint8Array> = {
  gzip: gzipSync,
  'x-gzip': gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
  identity: (bytes) => bytes,
};

/** `text` in the codings listed (applied first to last, as Content-Encoding lists them). */
function encode(text: string, codings: readonly string[]): Uint8Array<ArrayBuffer> {
  let bytes: Uint8Array = new TextEncoder().encode(text);
  for (const coding of codings) bytes = (ENCODERS[coding] as (bytes: Uint8Array) => Uint8Array)(bytes);
  return new Uint8Array(bytes) as Uint8Array<ArrayBuffer>;
}

describe('request bodies in a content coding (RFC 9110 §8.4)', () => {
  it('are read as their content: the same answer as the plain body, for any codings listed (generated)', async () => {
    const { call, keys } = await testApp();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 40 }),
        fc.array(fc.constantFrom(...Object.keys(ENCODERS)), { minLength: 1, maxLength: 3 }),
        fc.constantFrom('', ' ', ','),
        async (framework, codings, spacing) => {
          const text = JSON.stringify({ framework });
          const plain = await call('POST', '/v1/runs', { key: keys.agent, raw: text, headers: json });
          const coded = await call('POST', '/v1/runs', {
            key: keys.agent,
            raw: encode(text, codings),
            headers: { ...json, 'content-encoding': codings.join(`,${spacing}`) },
          });
          expect(coded.status, coded.text).toBe(plain.status);
          if (plain.status === 201 || plain.status === 200) expect(coded.json.framework).toBe(framework);
          else expect(coded.json).toEqual(plain.json);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('verify a gzipped bundle as the bundle itself (POST /v1/verify)', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'r', tool: 'read_file', arguments: { path: 'a' } }] },
    });
    const bundle = await call('GET', `/v1/runs/${run.json.run_id}/bundle`, { key: keys.reviewer });
    const plain = await call('POST', '/v1/verify', { key: keys.reviewer, raw: bundle.text, headers: json });
    const zipped = await call('POST', '/v1/verify', {
      key: keys.reviewer,
      raw: encode(bundle.text, ['gzip']),
      headers: { ...json, 'content-encoding': 'gzip' },
    });
    expect(plain.json.ok).toBe(true);
    expect(zipped.json).toEqual(plain.json);
    // Without the header, gzip bytes are no bundle's text, and are refused saying so.
    const unlabelled = await call('POST', '/v1/verify', {
      key: keys.reviewer,
      raw: encode(bundle.text, ['gzip']),
      headers: json,
    });
    expect(unlabelled.status).toBe(400);
    expect(unlabelled.json.error.message).toContain('gzip');
  });

  it('are held to the limit once decoded (413), a coding not decoded is 415, bad bytes 400', async () => {
    const { call, keys } = await testApp();
    // A kilobyte of gzip that inflates past the 1 MiB+ limit.
    const bomb = encode(`{"framework":"${'a'.repeat(DEFAULT_BODY_LIMIT)}"}`, ['gzip']);
    expect(bomb.length).toBeLessThan(DEFAULT_BODY_LIMIT / 100);
    for (const coding of ['gzip', 'x-gzip']) {
      const answer = await call('POST', '/v1/runs', {
        key: keys.agent,
        raw: bomb,
        headers: { ...json, 'content-encoding': coding },
      });
      expect(answer.status).toBe(413);
      expect(answer.json.error.message).toBe(
        `body: over the limit of ${DEFAULT_BODY_LIMIT} bytes once its ${coding} coding is undone`,
      );
    }
    for (const coding of ['zstd', 'compress', 'gzip, zstd']) {
      const answer = await call('POST', '/v1/runs', {
        key: keys.agent,
        raw: '{}',
        headers: { ...json, 'content-encoding': coding },
      });
      expect(answer.status, coding).toBe(415);
      expect(answer.headers.get('accept-encoding')).toBe('gzip, deflate, br');
      expect(answer.json.error.message).toContain(JSON.stringify(coding.split(', ').pop()));
    }
    for (const coding of ['gzip', 'deflate', 'br']) {
      const answer = await call('POST', '/v1/runs', {
        key: keys.agent,
        raw: '{"framework":"x"}',
        headers: { ...json, 'content-encoding': coding },
      });
      expect(answer.status, coding).toBe(400);
      expect(answer.json.error.message).toMatch(new RegExp(`^body: not valid ${coding} content`));
    }
  });
});

const json = { 'content-type': 'application/json' };
