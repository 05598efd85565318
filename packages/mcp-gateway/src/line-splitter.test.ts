import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isStandIn } from './exact-json.js';
import { idOfCutMessage, type LineRead, LineSplitter } from './line-splitter.js';

/** `text` cut into pieces at the given offsets (sorted, within the text). */
function cut(text: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    pieces.push(text.subarray(start, point));
    start = point;
  }
  pieces.push(text.subarray(start));
  return pieces;
}

describe('LineSplitter', () => {
  it('gives every line of at most maxBytes bytes as sent and every longer one as over the limit, however the stream is cut', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme', maxLength: 40 }).map((line) => line.replace(/[\r\n]/g, ' ')),
          {
            maxLength: 8,
          },
        ),
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.boolean(),
        (lines, maxBytes, offsets, crlf) => {
          const text = Buffer.from(lines.map((line) => `${line}${crlf ? '\r' : ''}\n`).join(''), 'utf8');
          const splitter = new LineSplitter(maxBytes + (crlf ? 1 : 0));
          const reads: LineRead[] = [];
          for (const piece of cut(text, offsets)) reads.push(...splitter.push(piece));
          reads.push(...splitter.end());
          expect(reads).toEqual(
            lines.map((line) =>
              Buffer.byteLength(line) <= maxBytes ? { line } : { overLimit: expect.any(Object) },
            ),
          );
        },
      ),
    );
  });

  it('keeps only the start and the end of a line over the limit, whatever its length', () => {
    const splitter = new LineSplitter(1_000);
    const head = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"';
    expect(splitter.push(Buffer.from(head))).toEqual([]);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    for (let index = 0; index < 320; index++) expect(splitter.push(chunk)).toEqual([]); // 20 MiB
    const [read] = splitter.push(Buffer.from('"}}\n{"jsonrpc":"2.0","id":8,"method":"ping"}\n'));
    expect(read).toEqual({
      overLimit: {
        head: expect.stringMatching(/^\{"jsonrpc":"2\.0","id":7/),
        tail: expect.stringMatching(/x"\}\}$/),
      },
    });
    if (!read || !('overLimit' in read)) throw new Error('over the limit expected');
    expect(read.overLimit.head.length + read.overLimit.tail.length).toBeLessThanOrEqual(512);
    expect(splitter.end()).toEqual([]);
  });

  it('refuses a limit that is not positive', () => {
    expect(() => new LineSplitter(0)).toThrow(/maxBytes must be positive/);
  });
});

describe('idOfCutMessage', () => {
  it('reads a top-level id written first or last, and nothing else', () => {
    expect(idOfCutMessage('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{', '')).toBe(7);
    expect(idOfCutMessage('{"jsonrpc":"2.0","method":"ping","id":"a\\"b","params":{', '')).toBe('a"b');
    expect(idOfCutMessage('{"result":{"content":[', ']}},"jsonrpc":"2.0","id":12}')).toBe(12);
    expect(idOfCutMessage('{"result":{', '}},"id":3,"jsonrpc":"2.0"}')).toBe(3);
    const big = idOfCutMessage('{"jsonrpc":"2.0","id":12345678901234567890,', '');
    expect(isStandIn(big)).toBe(true);
    // A nested "id" is not the message's.
    expect(idOfCutMessage('{"jsonrpc":"2.0","method":"x","params":{"id":4', 'x","id":5}}')).toBeUndefined();
    expect(idOfCutMessage('{"result":{"a":', '"id":5}}')).toBeUndefined();
  });
});
