import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBody, TOO_LARGE } from './request-body.js';

/** `bytes` as a body streamed in the given chunk sizes, with no Content-Length. */
function streamed(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      let at = 0;
      for (const cut of cuts) {
        const end = Math.min(bytes.length, at + cut);
        if (end > at) controller.enqueue(bytes.slice(at, end));
        at = end;
      }
      if (at < bytes.length) controller.enqueue(bytes.slice(at));
      controller.close();
    },
  });
}

describe('readBody', () => {
  it('returns the text of a body within the limit and refuses one over it, declared or streamed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.integer({ min: 0, max: 400 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 10 }),
        fc.boolean(),
        async (text, limit, cuts, declare) => {
          const bytes = new TextEncoder().encode(text);
          const request = declare
            ? new Request('http://127.0.0.1/mcp', {
                method: 'POST',
                headers: { 'content-length': String(bytes.length) },
                body: bytes,
              })
            : new Request('http://127.0.0.1/mcp', {
                method: 'POST',
                body: streamed(bytes, cuts),
                duplex: 'half',
              } as RequestInit);
          const read = await readBody(request, limit);
          expect(read).toBe(bytes.length > limit ? TOO_LARGE : text);
        },
      ),
    );
  });

  it('refuses a declared length over the limit without reading the body', async () => {
    let pulled = false;
    const body = new ReadableStream(
      {
        pull() {
          pulled = true;
        },
      },
      { highWaterMark: 0 },
    );
    const request = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-length': '5000' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(await readBody(request, 4096)).toBe(TOO_LARGE);
    expect(pulled).toBe(false);
  });
});
