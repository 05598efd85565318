// The records of a bundle file in the one-record-a-line layout (see bundle-text.ts), read one line
// at a time by the verifier's record pass: no array of all parsed records, nor of all lines, is
// made; each record is garbage once the pass has read it. A line is read exactly as
// `parseBundleText` reads it (the same refusals, in the same order, naming the same line). When the
// file's record lines are ASCII bytes, they are read from the bytes: the body is never decoded
// whole (each line's text is made from its bytes as it is read, and is garbage after), and each
// line is hashed from its bytes (its UTF-8 encoding, no re-encoding); else from the decoded text.
import { isAscii } from 'node:buffer';
import type { LedgerRecord } from '@callgate/protocol';
import { sha256Into } from '../../crypto.js';
import {
  closingLineAt,
  headerFields,
  missingComma,
  parseRecordLine,
  partsOf,
  unclosed,
  wholeBundle,
} from '../bundle-text.js';
import { prevNamesDigest, readRecordLine } from '../record-line-reader.js';
import { hashCanonicalText, type RecordSource } from './record-source.js';

/** The record lines of a bundle file's text after its first line. */
export class LineRecords implements RecordSource {
  readonly count: number;
  /** Each record line's bounds in the body: [starts[i], ends[i]), its trailing `,` excluded. */
  readonly #starts: Float64Array;
  readonly #ends: Float64Array;
  /** The index of a record line not ending with `,` though a record follows (then the last), or -1. */
  readonly #missingComma: number;
  /** The body as text; undefined when it is read from its ASCII bytes (`#bytes`) alone. */
  readonly #body: string | undefined;
  /**
   * The body's bytes when they are ASCII (then a line's text offsets are its byte offsets, and its
   * bytes are its UTF-8 encoding), else undefined (lines are hashed from their text).
   */
  readonly #bytes: Buffer | undefined;
  /** How many records the pass has read (the next index it reads). */
  #read = 0;
  /** The text of the line read last, and its index. */
  #line = '';
  #lineIndex = -1;

  /**
   * @param body the file's text after its first line, or (the faster input) its bytes when they
   *   are ASCII: then no text of the whole body is made, each line's text is made from its bytes
   *   as it is read (for ASCII, the same text as the UTF-8 decoding), and it is garbage as soon as
   *   the pass has read it.
   * @throws CallgateError `ledger-invalid` when the last line is not `]}`.
   */
  constructor(body: string | Buffer) {
    const text = typeof body === 'string' ? body : undefined;
    const bytes = typeof body === 'string' ? undefined : body;
    const closeAt = text !== undefined ? closingLineAt(text) : closingLineOfBytes(bytes as Buffer);
    // Record lines fill [0, closeAt - 1); none when `]}` is the only line.
    const recordsEnd = closeAt - 1;
    let starts = new Float64Array(1024);
    let ends = new Float64Array(1024);
    let count = 0;
    let missing = -1;
    for (let start = 0; recordsEnd >= 0; ) {
      const stop = text !== undefined ? text.indexOf('\n', start) : (bytes as Buffer).indexOf(10, start);
      const last = stop === recordsEnd;
      if (count === starts.length) {
        starts = grown(starts);
        ends = grown(ends);
      }
      starts[count] = start;
      ends[count] = last ? stop : stop - 1;
      count += 1;
      const before = text !== undefined ? text.charCodeAt(stop - 1) : (bytes as Buffer)[stop - 1];
      if (!last && before !== 44) {
        missing = count - 1;
        break;
      }
      if (last) break;
      start = stop + 1;
    }
    this.count = count;
    this.#starts = starts;
    this.#ends = ends;
    this.#missingComma = missing;
    this.#body = text;
    this.#bytes = bytes;
  }

  /** The text of record line `index` (without its trailing `,`). */
  #text(index: number): string {
    const start = this.#starts[index] as number;
    const end = this.#ends[index] as number;
    // For ASCII bytes, latin1 decoding is UTF-8 decoding, without its checks.
    return this.#body === undefined
      ? (this.#bytes as Buffer).toString('latin1', start, end)
      : this.#body.slice(start, end);
  }

  /**
   * The fields the record checks read of record `index` when its line is read from ASCII bytes and
   * the no-object reader is certain of it (canonical JSON of a valid ledger record: see
   * `readRecordLine`), in the pass's order; else undefined, and `read` decides the line.
   */
  readChecked(index: number): LedgerRecord | undefined {
    const bytes = this.#bytes;
    if (bytes === undefined || index !== this.#read || index === this.#missingComma) return undefined;
    const fields = readRecordLine(bytes, this.#starts[index] as number, this.#ends[index] as number);
    if (fields !== undefined) this.#read = index + 1;
    return fields;
  }

  prevNamesDigest(digests: Uint8Array, offset: number): boolean {
    return prevNamesDigest(digests, offset);
  }

  read(index: number): unknown {
    if (index === this.#missingComma) throw missingComma(index + 2);
    const line = this.#text(index);
    if (index < this.#read) return JSON.parse(line);
    const record = parseRecordLine(line, index + 2);
    this.#read = index + 1;
    this.#line = line;
    this.#lineIndex = index;
    return record;
  }

  hash(
    index: number,
    _item: unknown,
    version2: boolean,
    leaves: Uint8Array,
    chain: Uint8Array | undefined,
  ): void {
    const bytes = this.#bytes;
    if (bytes === undefined) {
      const line = index === this.#lineIndex ? this.#line : this.#text(index);
      hashCanonicalText(line, version2, leaves, chain, index * 32);
      return;
    }
    const start = this.#starts[index] as number;
    const end = this.#ends[index] as number;
    if (end - start + 1 > scratch.length)
      scratch = Buffer.allocUnsafeSlow(Math.max(end - start + 1, scratch.length * 2));
    scratch[0] = 0;
    bytes.copy(scratch, 1, start, end);
    const length = end - start + 1;
    sha256Into(leaves, index * 32, scratch.subarray(0, length));
    if (!version2 && chain !== undefined) sha256Into(chain, index * 32, scratch.subarray(1, length));
  }

  /**
   * Reads every line the pass has not read, as the pass would, for the refusal a line gives (the
   * reading of a file refuses a bad line before any other check).
   * @throws CallgateError `ledger-invalid` naming the first bad line.
   */
  readRest(): void {
    for (let index = this.#read; index < this.count; index++) this.read(index);
  }
}

/**
 * Where the closing line `]}` starts in `bytes` (ASCII), as `closingLineAt` finds it in their text.
 * @throws CallgateError `ledger-invalid` when the last line is not `]}`.
 */
function closingLineOfBytes(bytes: Buffer): number {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 10) end -= 1;
  const closeAt = end === 0 ? 0 : bytes.lastIndexOf(10, end - 1) + 1;
  if (end === 0 || end - closeAt !== 2 || bytes[closeAt] !== 93 || bytes[closeAt + 1] !== 125)
    throw unclosed();
  return closeAt;
}

/** A reused buffer of 0x00 ‖ a record line's bytes, grown as needed. */
let scratch = Buffer.allocUnsafeSlow(4096);

/** A Float64Array twice as long, holding `array`. */
function grown(array: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const bigger = new Float64Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** A bundle file read for verification: its parsed fields, and its record lines when in the one-record-a-line layout. */
export interface BundleFile {
  /** The bundle; in the one-record-a-line layout `records` is an empty array of the records' count. */
  bundle: unknown;
  lines: LineRecords | undefined;
}

/**
 * Reads a bundle file's text (or its UTF-8 bytes) for verification, as `parseBundleText` reads
 * it, but leaves the record lines to be read one at a time ({@link LineRecords}).
 * @throws CallgateError `ledger-invalid` as `parseBundleText` (a record line's refusal comes from
 *   {@link LineRecords.read}).
 */
export function readBundleFile(input: string | Uint8Array): BundleFile {
  const { first, rest, whole } = partsOf(input);
  const header = headerFields(first);
  if (header === undefined) return { bundle: wholeBundle(whole()), lines: undefined };
  let body: string | Buffer | undefined;
  if (typeof input !== 'string') {
    const firstBreak = input.indexOf(10);
    const bytes = input.subarray(firstBreak + 1);
    if (isAscii(bytes)) body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const lines = new LineRecords(body ?? rest());
  // Holes, not records: the bundle's shape only asks for an array, and its length is the count.
  header.records = new Array(lines.count);
  return { bundle: header, lines };
}
