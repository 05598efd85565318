// The text of a bundle file. callgate writes every bundle version as one JSON document laid out
// so that each record is one line holding exactly its RFC 8785 canonical bytes (the bytes its leaf
// hash is over): the other fields on the first line, ending `"records":[`, then one record a line (each
// but the last followed by `,`), then `]}`. Any JSON reader reads it; the verifier reads it
// losslessly: a record line with a duplicate key, or in any form but its canonical one, is refused
// naming its line, and each line's bytes are hashed as they are; the first line must be the text
// `JSON.stringify` writes for its own parse (only its key order is free: JSON objects are unordered
// and the verifier reads fields by name). A bundle in another layout is held to the same, but for
// the whitespace between its tokens: nothing before its `{`, each record in its canonical key
// order, and a first line that opens `"records":[` is this layout whatever spacing surrounds it.
import { type AnyBundle, CallgateError } from '@callgate/protocol';
import { fastCanonicalJson } from '../json/canonical.js';
import { numberHeldExactly } from '../json/exact-number.js';
import { isCertainlyCanonical } from './canonical-line.js';
import { canonicalOfParsed } from './plain-canonical.js';

const RECORDS_OPEN = '"records":[';
const CLOSE = ']}';

/**
 * The file text of a bundle, of any version, in the one-record-a-line layout (see the file
 * comment): `records` last, one canonical record a line. Ends with a newline.
 * @throws CallgateError `tool-args-invalid` when a record has no canonical JSON form.
 */
export function serializeBundle(bundle: AnyBundle): string {
  const { records, ...rest } = bundle;
  const head = JSON.stringify(rest);
  const lines = records.map((record) => fastCanonicalJson(record));
  return `${head.slice(0, -1)},${RECORDS_OPEN}\n${lines.join(',\n')}${lines.length > 0 ? '\n' : ''}${CLOSE}\n`;
}

/** A bundle file read: the parsed bundle, and for the one-record-a-line layout each record's line. */
export interface BundleText {
  bundle: unknown;
  /** Each record's exact text (its canonical bytes when it verifies), in order; absent for other layouts. */
  lines?: string[];
  /** The 1-based line number of the first record line (record i is on line `firstLine + i`). */
  firstLine: number;
}

/**
 * The offset of the first key an object of `text` (valid JSON) gives twice, or -1. Keys are
 * compared as parsed (escapes decoded).
 */
function duplicateKeyAt(text: string): number {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 34) {
      let end = index + 1;
      let escaped = false;
      for (;;) {
        const next = text.charCodeAt(end);
        if (next === 34) break;
        if (next === 92) {
          escaped = true;
          end += 2;
        } else end += 1;
      }
      const keys = stack.at(-1);
      if (expectKey && keys) {
        const key = escaped ? (JSON.parse(text.slice(index, end + 1)) as string) : text.slice(index + 1, end);
        if (keys.has(key)) return index;
        keys.add(key);
        expectKey = false;
      }
      index = end;
    } else if (code === 123) {
      stack.push(new Set());
      expectKey = true;
    } else if (code === 91) stack.push(null);
    else if (code === 125 || code === 93) stack.pop();
    else if (code === 44) expectKey = stack.at(-1) != null;
  }
  return -1;
}

/**
 * `JSON.parse` of `text`, refusing an object that gives a key twice (which `JSON.parse` would
 * silently resolve to the last).
 * @throws CallgateError `ledger-invalid` naming the line and column of the repeated key, or why the
 *   text is not JSON.
 */
export function parseRefusingDuplicates(text: string, firstLine: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CallgateError('ledger-invalid', `the bundle is not JSON: ${(error as Error).message}`);
  }
  const at = duplicateKeyAt(text);
  if (at >= 0) {
    const before = text.slice(0, at);
    const line = firstLine + (before.match(/\n/g)?.length ?? 0);
    const column = at - before.lastIndexOf('\n');
    throw new CallgateError(
      'ledger-invalid',
      `line ${line}, column ${column} of the bundle gives an object's key ${text.slice(at, text.indexOf('"', at + 1) + 1)} twice: the bundle is not read as written`,
    );
  }
  return value;
}

/**
 * `text` (valid JSON) without the whitespace between its tokens: the four JSON whitespace
 * characters outside strings are dropped, strings are kept byte for byte.
 */
function withoutWhitespace(text: string): string {
  let kept = '';
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 34) {
      index += 1;
      while (text.charCodeAt(index) !== 34) index += text.charCodeAt(index) === 92 ? 2 : 1;
    } else if (code === 32 || code === 10 || code === 13 || code === 9) {
      kept += text.slice(from, index);
      from = index + 1;
    }
  }
  return kept + text.slice(from);
}

/**
 * Refuses JSON `text` that is not the text `JSON.stringify` writes for its own parse `value`
 * (keys in the order given): a number in another form (`4999.9999999999999999`, `5e3`, `5000.0`,
 * digits past what a double holds), a string escaped otherwise (`\u0061` for `a`) or any text
 * two parses could not tell apart would otherwise verify as the bundle it differs from. With
 * `spacing`, whitespace between tokens is allowed (a layout callgate does not write, read whole).
 * @throws CallgateError `ledger-invalid` naming `where` and the first offset that differs.
 */
function holdToWrittenForm(text: string, value: unknown, where: string, spacing: boolean): void {
  const given = spacing ? withoutWhitespace(text) : text;
  const written = JSON.stringify(value);
  if (given === written) return;
  let at = 0;
  while (at < given.length && given.charCodeAt(at) === written.charCodeAt(at)) at += 1;
  throw new CallgateError(
    'ledger-invalid',
    `${where} is not the text its values are written as (at ${JSON.stringify(given.slice(at, at + 24))}, written ${JSON.stringify(written.slice(at, at + 24))}): a number form, string escape${spacing ? '' : ' or spacing'} the verifier would read as another text's; the bundle is not read as written`,
  );
}

/**
 * Whether `line` is the RFC 8785 canonical form of `record`, its `JSON.parse`: a duplicate key,
 * other key order, spacing or another number form makes them differ (see `canonicalOfParsed`).
 * A one-pass scan of the line decides the usual case; what it is not certain of, the canonical
 * form of `record` compared with the line decides.
 */
export function isCanonicalLine(line: string, record: unknown): boolean {
  if (isCertainlyCanonical(line)) return true;
  try {
    return canonicalOfParsed(record) === line;
  } catch {
    return false;
  }
}

/** A bundle file's first line, and (made only when wanted) the text after it, and the whole text. */
export interface FileParts {
  first: string;
  rest: () => string;
  whole: () => string;
}

/**
 * The parts of a file given as text, or as UTF-8 bytes: then the first line and the rest are
 * decoded apart (a newline byte is never inside a UTF-8 sequence, so this is the decoding of the
 * whole, split), which leaves the records' text in V8's one-byte form when it is ASCII, though a
 * signature line holds a non-ASCII character; a one-byte string is parsed and scanned faster.
 */
export function partsOf(input: string | Uint8Array): FileParts {
  if (typeof input === 'string') {
    const firstBreak = input.indexOf('\n');
    return {
      first: firstBreak < 0 ? input : input.slice(0, firstBreak),
      rest: () => input.slice(firstBreak + 1),
      whole: () => input,
    };
  }
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const firstBreak = bytes.indexOf(10);
  return {
    first: bytes.toString('utf8', 0, firstBreak < 0 ? bytes.length : firstBreak),
    rest: () => bytes.toString('utf8', firstBreak + 1),
    whole: () => bytes.toString('utf8'),
  };
}

/**
 * Reads a bundle file's text (or its UTF-8 bytes) losslessly. In the one-record-a-line layout, the
 * first line's fields are parsed refusing duplicate keys, and each record line is parsed with
 * `JSON.parse` and must equal the canonical form of its parse, which a line with a duplicate key
 * (or any other form) never does. Any other layout is parsed whole, refusing duplicate keys.
 * @throws CallgateError `ledger-invalid` naming the line: a record line that is not JSON or not
 *   canonical, a key given twice, a malformed layout, text that is not JSON.
 */
export function parseBundleText(input: string | Uint8Array): BundleText {
  const { first, rest, whole } = partsOf(input);
  const header = headerFields(first);
  if (header === undefined) return { bundle: wholeBundle(whole()), firstLine: 0 };
  const body = rest();
  const closeAt = closingLineAt(body);
  const lines: string[] = [];
  const records: unknown[] = [];
  // Record lines fill [0, closeAt - 1); none when `]}` is the only line.
  const recordsEnd = closeAt - 1;
  for (let start = 0, index = 0; recordsEnd >= 0; index++) {
    const lineNumber = index + 2;
    const stop = body.indexOf('\n', start);
    const last = stop === recordsEnd;
    if (!last && body.charCodeAt(stop - 1) !== 44) throw missingComma(lineNumber);
    // A line's text without its trailing `,` (records but the last).
    const line = body.slice(start, last ? stop : stop - 1);
    records.push(parseRecordLine(line, lineNumber));
    lines.push(line);
    if (last) break;
    start = stop + 1;
  }
  header.records = records;
  return { bundle: header, lines, firstLine: 2 };
}

/**
 * The fields of a bundle file's first line in the one-record-a-line layout, `records` empty; or
 * undefined when the line does not open that layout (then the file is read whole).
 * @throws CallgateError `ledger-invalid` when the line's fields give a key twice or are not an object.
 */
export function headerFields(first: string): Record<string, unknown> | undefined {
  if (!first.startsWith('{') || !first.endsWith(RECORDS_OPEN)) return undefined;
  const headerText = `${first.slice(0, -RECORDS_OPEN.length)}"records":[]}`;
  const header = parseRefusingDuplicates(headerText, 1);
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new CallgateError('ledger-invalid', 'line 1 of the bundle is not a JSON object');
  // The first line (manifest, openings, policies, checkpoints, ...) is held to exact text as the
  // record lines are: the text callgate writes for its parse, so no other text of the same values
  // verifies as this bundle.
  holdToWrittenForm(headerText, header, 'line 1 of the bundle', false);
  return header as Record<string, unknown>;
}

/** What a JSON value is, in words: `an array`, `null`, `a string`, `a number`, `true`. */
function jsonKindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'boolean') return String(value);
  return `a ${typeof value}`;
}

/**
 * A bundle in another layout than callgate's one record a line (indented, or written by another
 * JSON writer such as Python's `json.dumps`), read whole and held to its values: duplicate keys
 * refused, and every number held exactly by the double it is read as ({@link numbersHeldExactly}),
 * so the verifier reads the values written and no other; whitespace, key order and string escapes
 * (`\u2014` for `—`) are free, since they do not change a value. Records are hashed from the
 * canonical form of their values, as in the line layout.
 * @throws CallgateError `ledger-invalid` naming what differs, or saying the JSON is not an object.
 */
export function wholeBundle(text: string): unknown {
  const bundle = parseRefusingDuplicates(text, 1);
  // JSON that is not an object (`[]`, `null`, `"text"`) is no bundle at all, whatever its spacing.
  if (typeof bundle !== 'object' || bundle === null || Array.isArray(bundle))
    throw new CallgateError(
      'ledger-invalid',
      `the bundle is not a JSON object but ${jsonKindOf(bundle)}: a bundle is an object such as {"format":"callgate-bundle/3",...} (callgate export writes one)`,
    );
  // Whitespace is free between tokens only: none before the bundle's `{`.
  if (text.charCodeAt(0) !== 123)
    throw new CallgateError(
      'ledger-invalid',
      `line 1 of the bundle does not begin with "{": spacing before the bundle (${JSON.stringify(text.slice(0, 8))}) is not what callgate writes; the bundle is not read as written`,
    );
  // A first line that opens `records` is the one-record-a-line layout, held to exact text: spacing
  // in it (a space or "\r" at its end, say) does not make it another layout.
  const firstBreak = text.indexOf('\n');
  const first = firstBreak < 0 ? text : text.slice(0, firstBreak);
  if (
    firstBreak >= 0 &&
    first.length > RECORDS_OPEN.length &&
    withoutWhitespace(first).endsWith(RECORDS_OPEN)
  )
    throw new CallgateError(
      'ledger-invalid',
      `line 1 of the bundle opens "records" as the one-record-a-line layout does, but with spacing callgate does not write (it ends ${JSON.stringify(first.slice(-14))}); the bundle is not read as written`,
    );
  numbersHeldExactly(text);
  return bundle;
}

/**
 * Refuses JSON `text` holding a number token a double does not hold exactly
 * (`4999.9999999999999999`, `1e-400`, `9007199254740993`; see `numberHeldExactly`): read as a
 * double it would verify as another value than the one written.
 * @throws CallgateError `ledger-invalid` naming the line, the column and the digits.
 */
function numbersHeldExactly(text: string): void {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 34) {
      // A string: skip to its closing quote.
      for (index += 1; index < text.length; index++) {
        const inner = text.charCodeAt(index);
        if (inner === 92) index += 1;
        else if (inner === 34) break;
      }
    } else if (code === 45 || (code >= 48 && code <= 57)) {
      let end = index + 1;
      while (end < text.length) {
        const next = text.charCodeAt(end);
        if (
          (next >= 48 && next <= 57) ||
          next === 46 ||
          next === 101 ||
          next === 69 ||
          next === 43 ||
          next === 45
        )
          end += 1;
        else break;
      }
      const token = text.slice(index, end);
      if (!numberHeldExactly(token)) {
        const before = text.slice(0, index);
        const line = 1 + (before.match(/\n/g)?.length ?? 0);
        const column = index - before.lastIndexOf('\n');
        throw new CallgateError(
          'ledger-invalid',
          `the bundle is not read as written: line ${line}, column ${column} holds the number ${token}, whose digits a double does not hold (it would verify as ${JSON.stringify(Number(token))})`,
        );
      }
      index = end - 1;
    }
  }
}

/**
 * Where the closing line `]}` starts in `body` (the text after the first line): trailing line
 * breaks ignored, the last line must be `]}`, and every line before it is a record.
 * @throws CallgateError `ledger-invalid` when the last line is not `]}`.
 */
export function closingLineAt(body: string): number {
  let end = body.length;
  while (end > 0 && body.charCodeAt(end - 1) === 10) end -= 1;
  const closeAt = end === 0 ? 0 : body.lastIndexOf('\n', end - 1) + 1;
  if (end === 0 || body.slice(closeAt, end) !== CLOSE) throw unclosed();
  return closeAt;
}

/** The refusal of a bundle whose last line is not `]}`. */
export function unclosed(): CallgateError {
  return new CallgateError(
    'ledger-invalid',
    `the bundle's last line is not ${CLOSE}: the file is cut short or malformed`,
  );
}

/** The refusal of record line `lineNumber` (1-based) that does not end with `,` though a record follows. */
export function missingComma(lineNumber: number): CallgateError {
  return new CallgateError(
    'ledger-invalid',
    `line ${lineNumber} of the bundle: a record line but the last must end with ","`,
  );
}

/**
 * The record of a record line (without its trailing `,`), which must be its RFC 8785 canonical form.
 * @throws CallgateError `ledger-invalid` naming line `lineNumber` when it is not JSON or not canonical.
 */
export function parseRecordLine(line: string, lineNumber: number): unknown {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch (error) {
    throw new CallgateError(
      'ledger-invalid',
      `line ${lineNumber} of the bundle is not a JSON record: ${(error as Error).message}`,
    );
  }
  if (!isCanonicalLine(line, record))
    throw new CallgateError(
      'ledger-invalid',
      `line ${lineNumber} of the bundle is not its record's RFC 8785 canonical form (a duplicate key, key order, spacing or number form): the record is not read as written`,
    );
  return record;
}
