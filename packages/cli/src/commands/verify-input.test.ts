import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBundleInput } from './verify-input.js';

const folder = await mkdtemp(join(tmpdir(), 'callgate-verify-input-'));

describe('readBundleInput', () => {
  it('reads a file, a device or standard input whole up to the bound, and refuses one byte past it (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 64 }),
        fc.integer({ min: 0, max: 64 }),
        fc.integer({ min: 1, max: 8 }),
        async (bytes, limit, pieces) => {
          const file = join(folder, 'input.bin');
          await writeFile(file, bytes);
          // Standard input arrives in pieces of any size.
          const size = Math.ceil(bytes.length / pieces) || 1;
          const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, index) =>
            Buffer.from(bytes.subarray(index * size, (index + 1) * size)),
          );
          for (const read of [
            await readBundleInput(file, undefined, limit),
            await readBundleInput('-', Readable.from(chunks), limit),
          ]) {
            if (bytes.length > limit)
              expect(read).toEqual({ problem: `is larger than ${limit} bytes, the most verify reads` });
            else expect(read).toEqual({ bytes: Buffer.from(bytes) });
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('stops reading a device that never ends one byte past the bound', async () => {
    expect(await readBundleInput('/dev/zero', undefined, 3 * 1024 * 1024)).toEqual({
      problem: `is larger than ${3 * 1024 * 1024} bytes, the most verify reads`,
    });
  });

  it('says a folder or a missing file cannot be read', async () => {
    expect(await readBundleInput(folder)).toEqual({ problem: 'cannot be read: it is a folder, not a file' });
    expect(await readBundleInput(join(folder, 'absent'))).toMatchObject({
      problem: expect.stringMatching(/^cannot be read: ENOENT/),
    });
  });
});
