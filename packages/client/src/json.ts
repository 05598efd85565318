// The JSON the client writes to and reads from a callgate server (RFC 8259 text), losslessly:
// what the caller passed is what the server sees, and what the server wrote is what the caller
// reads (docs/ledger.md, "Invariants of the record" 4).
import { recordable } from '@callgate/core/json';
import { CallgateError } from '@callgate/protocol';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';

/**
 * Where a request body holds committed values (a model message's content, a tool result): there a
 * value with no JSON form is replaced by the `callgate-normalize/1` marker the server would commit
 * in its place, instead of refusing the request. The paths are those of the server's bodies.
 */
const NORMALIZED_AT = /^body(?:\.content|\.message\.content|\.result|\.outcomes\[\d+\]\.result)$/;

const keyPath = (path: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

const wellFormed = (text: string) => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** Objects whose enumerable properties are not their content: JSON.stringify would write `{}`. */
const OPAQUE: ReadonlyArray<abstract new (...parts: never[]) => object> = [
  Map,
  Set,
  WeakMap,
  WeakSet,
  RegExp,
  Promise,
  Error,
  ArrayBuffer,
];

function refuse(path: string, reason: string): never {
  throw new CallgateError('request-invalid', `${path}: ${reason}; not sent`, { path });
}

function describe(value: object): string {
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor
    ?.name;
  return name ? `a ${name}` : 'an object';
}

/**
 * `value` as the server reads it back: a `bigint` within ±(2^53−1) is the number it writes
 * (core's rule counts every `bigint` as a big integer; the server sees only digits). Arrays and
 * plain objects are copied, cycles kept; anything else is returned as it is.
 */
function asSent(value: unknown, copies: Map<object, unknown>): unknown {
  if (typeof value === 'bigint') return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value;
  if (value === null || typeof value !== 'object') return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    copies.set(value, copy);
    for (let index = 0; index < value.length; index++)
      if (index in value) copy[index] = asSent(value[index], copies);
      else copy.length = index + 1;
    return copy;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  copies.set(value, copy);
  for (const key of Object.keys(value)) {
    const item = asSent((value as Record<string, unknown>)[key], copies);
    // Defined, not assigned: a key `__proto__` stays a key.
    Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Writes `value` at `path` as JSON text. `ancestors` holds the objects above it (a cycle is
 * refused, a value repeated side by side is written twice, as JSON.stringify does).
 */
function write(value: unknown, path: string, ancestors: Set<object>, normalize: boolean): string {
  if (normalize && NORMALIZED_AT.test(path)) {
    const { reasons } = recordable(value);
    // Big integers alone are sent with their digits: the server keeps them and applies the rule
    // itself (the same marker: its raw text holds the same digits).
    if (reasons.some((reason) => reason !== 'unsafe-integer'))
      return write(recordable(asSent(value, new Map())).value, path, ancestors, false);
  }
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value))
        refuse(path, 'the string holds a lone UTF-16 surrogate, which UTF-8 cannot carry');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) refuse(path, `${value} has no JSON form (RFC 8259 §6)`);
      return Object.is(value, -0) ? '-0' : JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return refuse(path, `a ${typeof value} has no JSON form`);
    default:
      break;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (isLosslessNumber(object)) return (object as { value: string }).value;
  if (ancestors.has(object)) refuse(path, 'the value contains itself (a cycle)');
  if (OPAQUE.some((type) => object instanceof type) || ArrayBuffer.isView(object))
    refuse(path, `${describe(object)} has no JSON form`);
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      const items: string[] = [];
      for (let index = 0; index < object.length; index++) {
        const at = `${path}[${index}]`;
        if (!(index in object)) refuse(at, 'a hole in a sparse array has no JSON form');
        items.push(write(object[index], at, ancestors, normalize));
      }
      return `[${items.join(',')}]`;
    }
    const withJson = object as { toJSON?: (key: string) => unknown };
    if (typeof withJson.toJSON === 'function') {
      // The value's own JSON form (a Date writes its ISO text), as JSON.stringify does.
      return write(withJson.toJSON(''), path, ancestors, normalize);
    }
    const entries: string[] = [];
    for (const key of Object.keys(object)) {
      const at = keyPath(path, key);
      if (!wellFormed(key)) refuse(at, 'the key holds a lone UTF-16 surrogate, which UTF-8 cannot carry');
      const item = (object as Record<string, unknown>)[key];
      // An absent optional field, as JSON.stringify leaves it out.
      if (item === undefined) continue;
      entries.push(`${JSON.stringify(key)}:${write(item, at, ancestors, normalize)}`);
    }
    return `{${entries.join(',')}}`;
  } finally {
    ancestors.delete(object);
  }
}

/**
 * A request body as JSON text (RFC 8259), written so the server sees what the caller passed:
 * integers with every digit (a `bigint`, or a lossless-json `LosslessNumber` as parsed, keeps
 * its digits; the server's lossless parser keeps them and refuses or normalises them itself), `-0`
 * as `-0`, a value with a `toJSON` method as what it returns (a Date as its ISO text) and object
 * fields that are `undefined` left out, as JSON.stringify does.
 *
 * A committed value — a message's `content`, an outcome's `result` — that has no canonical JSON
 * form (NaN, ±Infinity, a lone UTF-16 surrogate, a value that is not plain JSON) is replaced by
 * the `callgate-normalize/1` marker the server commits in its place (docs/ledger.md,
 * "Normalisation"); the server's record says so (`result_normalized`, `content_normalized`).
 *
 * @param body the body; `normalize` false writes committed values strictly too.
 * @returns the JSON text.
 * @throws CallgateError `request-invalid` before anything is sent, naming the path
 *   (`body.calls[0].arguments.amount`), for anything else with no JSON form: NaN or ±Infinity, a
 *   lone UTF-16 surrogate in a string or a key, a value that contains itself, a function, a
 *   symbol, `undefined` or a hole in an array, a Map, Set, RegExp, Error, Promise or binary buffer.
 */
export function encodeBody(body: unknown, normalize = true): string {
  return write(body, 'body', new Set(), normalize);
}

/** The number an answer's digits stand for: a `bigint` for an integer a double cannot hold. */
function readNumber(digits: string): number | bigint {
  const number = Number(digits);
  if (!Number.isFinite(number))
    throw new CallgateError('internal', `the number ${digits} in callgate's answer is out of range`);
  if (!Number.isSafeInteger(number) && /^-?\d+$/.test(digits)) return BigInt(digits);
  return number;
}

/**
 * A server's answer (JSON text) read losslessly: an integer beyond ±(2^53−1) is a `bigint` with
 * every digit (JSON.parse would round it), other numbers are numbers; a key given twice with
 * different values, the `NaN` / `Infinity` tokens and a number out of a double's range are refused.
 * Uses the lossless-json parser core and the server read bodies with.
 *
 * @returns the value; `undefined` for empty text.
 * @throws CallgateError `internal` naming the problem and its position.
 */
export function decodeAnswer(text: string): unknown {
  if (text === '') return undefined;
  try {
    return parseLossless(text, null, readNumber);
  } catch (error) {
    if (error instanceof CallgateError) throw error;
    throw new CallgateError(
      'internal',
      `callgate's answer is not valid JSON: ${(error as Error).message}`,
      {},
      { cause: error },
    );
  }
}
