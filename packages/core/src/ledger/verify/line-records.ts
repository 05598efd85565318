// The records of a bundle file in the one-record-a-line layout (see bundle-text.ts), read one line
// at a time by the verifier's record pass: no array of all parsed records, nor of all lines, is
// made; each record is garbage once the pass has read it. A line is read exactly as
// `parseBundleText` reads it (the same refusals, in the same order, naming the same line), and
// hashed from the file's own bytes when they are ASCII (then they are the UTF-8 encoding of the
// line's text, at the same offsets: no re-encoding per line), else from its text.
import { isAscii } from 'node:buffer';
import { sha256Into } from '../../crypto.js';
import {
  closingLineAt,
  headerFields,
  missingComma,
  parseRecordLine,
  partsOf,
  wholeBundle,
} from '../bundle-text.js';
import { hashCanonicalText, type RecordSource } from './record-source.js';

/** The record lines of a bundle file's text after its first line. */
export class LineRecords implements RecordSource {
  readonly count: number;
  /** Each record line's text bounds in `body`: [starts[i], ends[i]), its trailing `,` excluded. */
  readonly #starts: Float64Array;
  readonly #ends: Float64Array;
  /** The index of a record line not ending with `,` though a record follows (then the last), or -1. */
  readonly #missingComma: number;
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
   * @param body the file's text after its first line.
   * @param bytes the same, as the file's bytes, when the file was given as bytes.
   * @throws CallgateError `ledger-invalid` when the last line is not `]}`.
   */
  constructor(
    readonly body: string,
    bytes: Uint8Array | undefined,
  ) {
    const closeAt = closingLineAt(body);
    // Record lines fill [0, closeAt - 1); none when `]}` is the only line.
    const recordsEnd = closeAt - 1;
    let starts = new Float64Array(1024);
    let ends = new Float64Array(1024);
    let count = 0;
    let missing = -1;
    for (let start = 0; recordsEnd >= 0; ) {
      const stop = body.indexOf('\n', start);
      const last = stop === recordsEnd;
      if (count === starts.length) {
        starts = grown(starts);
        ends = grown(ends);
      }
      starts[count] = start;
      ends[count] = last ? stop : stop - 1;
      count += 1;
      if (!last && body.charCodeAt(stop - 1) !== 44) {
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
    if (bytes !== undefined && bytes.length === body.length && isAscii(bytes))
      this.#bytes = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  read(index: number): unknown {
    if (index === this.#missingComma) throw missingComma(index + 2);
    const line = this.body.slice(this.#starts[index], this.#ends[index]);
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
      const line =
        index === this.#lineIndex ? this.#line : this.body.slice(this.#starts[index], this.#ends[index]);
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
  let bytes: Uint8Array | undefined;
  if (typeof input !== 'string') {
    const firstBreak = input.indexOf(10);
    bytes = input.subarray(firstBreak + 1);
  }
  const lines = new LineRecords(rest(), bytes);
  // Holes, not records: the bundle's shape only asks for an array, and its length is the count.
  header.records = new Array(lines.count);
  return { bundle: header, lines };
}
