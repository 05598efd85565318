// The one input rule of the verifier, for every way a bundle reaches it (`callgate verify FILE`,
// `POST /v1/verify`, `callgate policy replay --bundle`): the bytes are the bundle. Bytes that are
// not a bundle's text at all — none, more than MAX_BUNDLE_BYTES, gzip, UTF-16, a UTF-8 byte-order
// mark before the `{` (callgate never writes one; RFC 8259 §8.1 forbids adding one), bytes that
// are not UTF-8, text that is not JSON (a file cut short included) — are refused as input, before any check; JSON that is a bundle or not is
// then verified, each failure a failed check. No decoder may drop or replace a byte on the way:
// what is verified is what was sent.
import { constants, isUtf8 } from 'node:buffer';
import type { VerifyOptions, VerifyReport } from './report.js';
import { verifyBundleText } from './verify-bundle.js';

/** What {@link verifyBundleBytes} made of some bytes: a verification report, or why they are not a bundle's text. */
export type BundleBytesVerdict =
  | { readable: true; report: VerifyReport }
  | {
      readable: false /** Why the bytes are not a bundle's text (`begins with a UTF-8 byte-order mark …`). */;
      refusal: string;
    };

/**
 * The offset of the first byte of `bytes` that does not begin or continue a well-formed UTF-8
 * sequence (RFC 3629 §4: no overlong forms, no surrogates, nothing past U+10FFFF), or -1 when
 * all are well formed. A sequence cut short by the end is ill formed at its first byte.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  for (let index = 0; index < bytes.length; ) {
    const lead = bytes[index] as number;
    if (lead < 0x80) {
      index += 1;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return index;
    if (index + length > bytes.length) return index;
    const second = bytes[index + 1] as number;
    if (second < low || second > high) return index;
    for (let next = 2; next < length; next++) {
      const continuation = bytes[index + next] as number;
      if (continuation < 0x80 || continuation > 0xbf) return index;
    }
    index += length;
  }
  return -1;
}

const MEBIBYTE = 1024 * 1024;

/**
 * The most bytes the verifier reads as one bundle: 511 MiB (535,822,336 bytes). A bundle is read
 * as one JavaScript string at worst (a file in another layout is parsed whole), and a string holds
 * at most `buffer.constants.MAX_STRING_LENGTH` UTF-16 code units (2^29 − 24 in Node 20 and 22 on
 * 64-bit, just under 512 MiB); UTF-8 never takes fewer bytes than code units, so bytes up to this
 * bound always fit. Larger input is refused before it is read whole.
 */
export const MAX_BUNDLE_BYTES: number = Math.min(511 * MEBIBYTE, constants.MAX_STRING_LENGTH);

/** The refusal of input larger than {@link MAX_BUNDLE_BYTES}: `is larger than 511 MiB, the most verify reads`. */
export const TOO_LARGE_REFUSAL = `is larger than ${Math.floor(MAX_BUNDLE_BYTES / MEBIBYTE)} MiB, the most verify reads (a bundle is read whole; export fewer runs a bundle)`;

/**
 * What the first bytes say the input is when they say it is not UTF-8 text: gzip (magic 1F 8B,
 * RFC 1952 §2.3.1) or UTF-16 (byte-order mark FF FE or FE FF, RFC 2781 §3.2); else undefined.
 */
function otherEncoding(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b)
    return 'is gzip-compressed (begins with bytes 1F 8B, RFC 1952), not a bundle’s text: decompress it first (gunzip)';
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    return `is UTF-16 text (byte-order mark ${bytes[0] === 0xff ? 'FF FE, little-endian' : 'FE FF, big-endian'}), not UTF-8: a bundle is UTF-8 (RFC 8259 §8.1); convert it (iconv -f UTF-16 -t UTF-8) or export it again`;
  return undefined;
}

/**
 * Why `bytes` cannot be a bundle's text before any is parsed, or undefined: empty, larger than
 * {@link MAX_BUNDLE_BYTES}, gzip-compressed (1F 8B first), UTF-16 (byte-order mark FF FE or
 * FE FF), a UTF-8 byte-order mark (EF BB BF) first, or bytes that are not UTF-8 (the offset of the
 * first given).
 */
export function bundleBytesRefusal(bytes: Uint8Array): string | undefined {
  if (bytes.length === 0) return 'is empty: no bundle was given';
  if (bytes.length > MAX_BUNDLE_BYTES) return TOO_LARGE_REFUSAL;
  const other = otherEncoding(bytes);
  if (other !== undefined) return other;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return 'begins with a UTF-8 byte-order mark (bytes EF BB BF), which is not part of a bundle (callgate writes none; RFC 8259 §8.1): save the bundle without it';
  const invalid = firstInvalidUtf8(bytes);
  if (invalid >= 0)
    return `is not UTF-8: byte ${invalid} (0x${(bytes[invalid] as number).toString(16).toUpperCase().padStart(2, '0')}) does not begin a well-formed UTF-8 sequence (RFC 3629)`;
  return undefined;
}

/**
 * Verifies a bundle given as the bytes of its file or of a request body, by the one input rule
 * (see the file comment). Never throws.
 *
 * @param bytes the bundle file's bytes (UTF-8, no byte-order mark), at most {@link MAX_BUNDLE_BYTES}.
 * @param options as for `verifyBundle`.
 * @returns `{ readable: true, report }` for JSON text (its report's `ok` says whether every check
 *   held), `{ readable: false, refusal }` for bytes that are no bundle's text: empty, too large,
 *   gzip, UTF-16, a byte-order mark first, not UTF-8, or not JSON (RFC 8259; a bundle cut short is not).
 */
export function verifyBundleBytes(bytes: Uint8Array, options: VerifyOptions = {}): BundleBytesVerdict {
  const refusal = bundleBytesRefusal(bytes);
  if (refusal !== undefined) return { readable: false, refusal };
  const report = verifyBundleText(bytes, options);
  // Only a bundle refused before any record was checked is parsed whole, to tell text that is not
  // JSON from a bundle that fails.
  if (!report.ok && report.records === 0) {
    try {
      JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    } catch (error) {
      return { readable: false, refusal: `is not JSON: ${(error as Error).message}` };
    }
  }
  return { readable: true, report };
}
