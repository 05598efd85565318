// Values and ids passed to the client exactly as they came. A request id or a number in an
// upstream's answer that a double cannot hold (an integer beyond ±(2^53−1), say) is read
// losslessly (a lossless-json `LosslessNumber` holding its digits), but the MCP SDK checks ids
// as strings or numbers and writes messages with `JSON.stringify`, which writes such a number
// rounded. So the gateway stands each one in for a string — a mark no client can forge (a random
// nonce of this process) followed by the digits — while it is handled, and writes the digits back
// in place of the quoted mark in the JSON text it sends. JSON-RPC 2.0 §4–5 (a response's id is
// the request's id), RFC 8259 §6 (numbers are digits; precision is the reader's business).
import { randomBytes } from 'node:crypto';
import { numberHeldExactly } from '@callgate/core/json';
import { isLosslessNumber, LosslessNumber, parse as parseLossless } from 'lossless-json';

/** Start of a stand-in string: NUL, a random nonce, a colon; the digits follow. */
const MARK = `\u0000callgate-exact-${randomBytes(12).toString('hex')}:`;

/** The mark as `JSON.stringify` writes it inside a string literal (NUL escaped as `\u0000`). */
const MARK_IN_TEXT = JSON.stringify(MARK).slice(1, -1);

/** A quoted stand-in in JSON text: the mark and the number's digits (RFC 8259 §6 number). */
const STAND_IN_TEXT = new RegExp(
  `"${MARK_IN_TEXT.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}(-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"`,
  'g',
);

/** True when `value` is a string standing in for digits (see {@link standIn}). */
export const isStandIn = (value: unknown): value is string =>
  typeof value === 'string' && value.startsWith(MARK);

/** The string standing in for the number `digits` (RFC 8259 number text) until it is written. */
export const standIn = (digits: string): string => `${MARK}${digits}`;

/** The digits a stand-in holds. */
export const digitsOf = (standInText: string): string => standInText.slice(MARK.length);

/**
 * True when `digits` (RFC 8259 number text, e.g. `12345678901234567890`, `1.0e3`, `1e-400`)
 * stands for an integer: its fraction digits, once the exponent is applied, are all zeros.
 */
export function isIntegerDigits(digits: string): boolean {
  const match = /^-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(digits);
  if (!match) return false;
  const significant = `${match[1]}${match[2] ?? ''}`.replace(/0+$/, '');
  if (/^0*$/.test(significant)) return true;
  const zeros = `${match[1]}${match[2] ?? ''}`.length - significant.length;
  // The power of ten of the last non-zero digit: an integer when it is not negative.
  return Number(match[3] ?? 0) - (match[2]?.length ?? 0) + zeros >= 0;
}

/**
 * A JSON-RPC request id as the gate handles it: an integer kept with its digits (a
 * `LosslessNumber`, beyond what a double holds) becomes its stand-in string; any other value is
 * returned as it is (an id with a fraction, `1.5` or `1e-400`, is refused by `invalidRequest`).
 */
export const gateId = (id: unknown): unknown =>
  isLosslessNumber(id) && isIntegerDigits(id.value) ? standIn(id.value) : id;

/**
 * A progress token or a cancelled request's id as the gate handles it (MCP: a string or any
 * number): a number the SDK's schemas would refuse (one kept with its digits, one with a
 * fraction, `-0`) becomes the stand-in of its digits, so it is checked as a string and written
 * back as those digits; a safe integer, a string or any other value is returned as it is.
 */
export function gateToken(token: unknown): unknown {
  if (isLosslessNumber(token)) return standIn(token.value);
  if (typeof token === 'number' && Number.isFinite(token)) {
    if (Object.is(token, -0)) return standIn('-0');
    if (!Number.isSafeInteger(token)) return standIn(String(token));
  }
  return token;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value);

/**
 * `message` (a parsed client JSON-RPC message, or a batch of them) with the ids and tokens the
 * SDK's schemas check as integers ready for them: an integer `id` kept as digits becomes its
 * stand-in ({@link gateId}); `params._meta.progressToken` of any message, the `progressToken` of
 * a `notifications/progress` and the `requestId` of a `notifications/cancelled` (so a
 * cancellation finds its request) go through {@link gateToken}. Changes the objects in place;
 * returns `message`.
 */
export function withGateIds<T>(message: T): T {
  if (Array.isArray(message)) {
    for (const item of message) withGateIds(item);
    return message;
  }
  if (!isRecord(message)) return message;
  const record = message as Record<string, unknown>;
  if (isLosslessNumber(record.id)) record.id = gateId(record.id);
  const params = record.params;
  if (!isRecord(params)) return message;
  if (record.method === 'notifications/cancelled' && params.requestId !== undefined)
    params.requestId = gateToken(params.requestId);
  if (record.method === 'notifications/progress' && params.progressToken !== undefined)
    params.progressToken = gateToken(params.progressToken);
  const meta = params._meta;
  if (isRecord(meta) && meta.progressToken !== undefined) meta.progressToken = gateToken(meta.progressToken);
  return message;
}

/**
 * `value` with every `LosslessNumber` in it replaced by its stand-in string, for writers that
 * know only `JSON.stringify` (the SDK's transports); {@link restoreDigits} turns the written text
 * back. Copies only the arrays and objects on the way to a replaced number; returns `value`
 * itself when it holds none (the usual case), so the cost is one walk.
 */
export function forWire(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (isLosslessNumber(value)) return standIn(value.value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      const written = forWire(item);
      if (written !== item) {
        copy ??= value.slice();
        copy[index] = written;
      }
    }
    return copy ?? value;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    const written = forWire(item);
    if (written !== item) {
      copy ??= { ...record };
      copy[key] = written;
    }
  }
  return copy ?? value;
}

/** True for a number kept with its digits only to keep the sign of a zero (`-0`, `-0.0`). */
const isNegativeZero = (value: unknown): boolean =>
  isLosslessNumber(value) && Object.is(Number(value.value), -0);

/**
 * `value` as the ledger records it: a `-0` kept with its digits for the client (see
 * `parseKeepingDigits`) becomes the number `-0`, which canonical JSON (RFC 8785) writes `0`,
 * so the record is what it was before the sign was kept; any other kept number stays (recorded
 * under `callgate-normalize/1` or `/2`). Copies only the arrays and objects on the way to a
 * replaced number; returns `value` itself when it holds none (one walk).
 */
export function forRecord(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (isLosslessNumber(value)) return isNegativeZero(value) ? -0 : value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      const recorded = forRecord(item);
      if (recorded !== item) {
        copy ??= value.slice();
        copy[index] = recorded;
      }
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    const recorded = forRecord(item);
    if (recorded !== item) {
      copy ??= { ...record };
      copy[key] = recorded;
    }
  }
  return copy ?? value;
}

/**
 * `text` (JSON written from a value that went through {@link forWire} or held stand-in ids) with
 * every quoted stand-in replaced by the digits it stands for. Text without one is returned as it
 * is (one native substring search).
 */
export function restoreDigits(text: string): string {
  if (!text.includes(MARK_IN_TEXT)) return text;
  return text.replace(STAND_IN_TEXT, '$1');
}

/**
 * `message` as JSON text for the client (RFC 8259): `JSON.stringify`, with kept numbers and
 * stand-in ids written as the digits they were sent with.
 */
export function writeJson(message: unknown): string {
  return restoreDigits(JSON.stringify(forWire(message)));
}

/**
 * A number token of an upstream's answer: a double when it holds the value exactly enough and
 * `JSON.stringify` writes it back as the same value (so not `-0`, which it writes `0`).
 */
function upstreamNumber(digits: string): number | LosslessNumber {
  const number = Number(digits);
  if (
    !Number.isFinite(number) ||
    (Number.isInteger(number) && !Number.isSafeInteger(number)) ||
    Object.is(number, -0) ||
    !numberHeldExactly(digits)
  )
    return new LosslessNumber(digits);
  return number;
}

/**
 * Parses `text` (JSON) with lossless-json: a number a double cannot hold (an integer beyond
 * ±(2^53−1), a decimal a double rounds such as `1000.00000000000001` or `1e-400`, or out of
 * range) kept as a `LosslessNumber` with its digits; a key given twice with
 * different values refused; `__proto__` kept as an own key (never a prototype).
 * @throws SyntaxError saying what is wrong and at which position.
 */
export function parseKeepingDigits(text: string): unknown {
  return parseLossless(text, null, upstreamNumber);
}

/** The mark's bytes as written in UTF-8 JSON text (see {@link restoreDigits}). */
const MARK_BYTES = Buffer.from(MARK_IN_TEXT, 'utf8');

/**
 * {@link restoreDigits} for a chunk of UTF-8 JSON text that holds whole messages (an event of a
 * server-sent event stream, as the SDK's transport writes them): `chunk` itself when it holds no
 * stand-in (one native byte search).
 */
export function restoreDigitsIn(chunk: Uint8Array): Uint8Array {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (bytes.indexOf(MARK_BYTES) < 0) return chunk;
  return Buffer.from(restoreDigits(bytes.toString('utf8')), 'utf8');
}

/**
 * `response` with {@link restoreDigitsIn} applied to each chunk of its body (the SDK's event
 * streams, which write one whole event per chunk); `response` itself when it has no body.
 */
export function withDigitsRestored(response: Response): Response {
  const body = response.body;
  if (!body) return response;
  const restored = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(restoreDigitsIn(chunk));
      },
    }),
  );
  return new Response(restored, { status: response.status, headers: response.headers });
}
