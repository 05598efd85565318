// How `callgate verify` reads the bundle it is given: a file, or standard input for `-`, never
// more than the verifier reads (MAX_BUNDLE_BYTES). A regular file's size is known before it is
// read, so a file too large is refused unread; a device, a pipe or standard input (which may
// never end, as /dev/zero does not) is read only up to one byte past the bound.
import { open } from 'node:fs/promises';
import { MAX_BUNDLE_BYTES, TOO_LARGE_REFUSAL } from '@callgate/core/ledger';

/** What {@link readBundleInput} read: the bytes, or why they could not be read. */
export type BundleInput = { bytes: Buffer } | { problem: string };

/** How many bytes one read asks for, when the size is not known beforehand. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Reads the bundle `file` names (`-`: `stdin`), at most `limit` bytes.
 * @param file a path, or `-` for standard input.
 * @param stdin the stream `-` reads (process.stdin by default).
 * @param limit the most bytes read, default MAX_BUNDLE_BYTES (511 MiB).
 * @returns `{ bytes }`, or `{ problem }` completing `callgate verify: FILE …`: `cannot be read: …`,
 *   or `is larger than N MiB, the most verify reads …` (never a partial read). Never throws.
 */
export async function readBundleInput(
  file: string,
  stdin: NodeJS.ReadableStream = process.stdin,
  limit: number = MAX_BUNDLE_BYTES,
): Promise<BundleInput> {
  const tooLarge = {
    problem:
      limit === MAX_BUNDLE_BYTES ? TOO_LARGE_REFUSAL : `is larger than ${limit} bytes, the most verify reads`,
  };
  if (file === '-') {
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of stdin) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
        total += bytes.length;
        if (total > limit) return tooLarge;
        chunks.push(bytes);
      }
    } catch (error) {
      return { problem: `cannot be read: ${(error as Error).message}` };
    }
    return { bytes: Buffer.concat(chunks, total) };
  }
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, 'r');
    const stat = await handle.stat();
    if (stat.isDirectory()) return { problem: 'cannot be read: it is a folder, not a file' };
    if (stat.isFile() && stat.size > limit) return tooLarge;
    // A regular file may still grow while read, and a device's size says nothing: read in
    // chunks, stopping one byte past the bound.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, limit + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > limit) return tooLarge;
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return { bytes: Buffer.concat(chunks, total) };
  } catch (error) {
    return { problem: `cannot be read: ${(error as Error).message}` };
  } finally {
    await handle?.close().catch(() => {});
  }
}
