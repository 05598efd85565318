// The JSON the client writes to and reads from a callgate server (RFC 8259 text), losslessly:
// what the caller passed is what the server sees, and what the server wrote is what the caller
// reads (docs/ledger.md, "Invariants of the record" 4).
import { numberHeldExactly, recordable } from '@callgate/core/json';
import { CallgateError } from '@callgate/protocol';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';

/** Keys and indexes from the body down to a value; spelled out as a path only to refuse it. */
type Trail = Array<string | number>;

/**
 * True at a committed value of a request body (a model message's content, a tool result): there
 * a value with no JSON form is replaced by the `callgate-normalize/1` marker the server would
 * commit in its place, instead of refusing the request. The places are those of the server's
 * bodies: `content`, `message.content`, `result`, `outcomes[i].result`.
 */
function committedAt(trail: Trail): boolean {
  switch (trail.length) {
    case 1:
      return trail[0] === 'content' || trail[0] === 'result';
    case 2:
      return trail[0] === 'message' && trail[1] === 'content';
    case 3:
      return trail[0] === 'outcomes' && typeof trail[1] === 'number' && trail[2] === 'result';
    default:
      return false;
  }
}

const keyPath = (path: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/** The trail as a path from `body` (`body.calls[0].arguments.amount`). */
function pathOf(trail: Trail): string {
  let path = 'body';
  for (const step of trail) path = typeof step === 'number' ? `${path}[${step}]` : keyPath(path, step);
  return path;
}

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

/** Thrown inside a committed value written as plain JSON: it has none, normalise it instead. */
const NOT_PLAIN = Symbol('not plain JSON');

function refuse(trail: Trail, reason: string): never {
  const path = pathOf(trail);
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
 * How a value is written: `body` (committed values are normalised when they have no JSON form),
 * `strict` (anything with no JSON form is refused), `plain` (inside a committed value: anything
 * that is not plain JSON, toJSON included, throws {@link NOT_PLAIN}, as core's rule would mark it).
 */
type Mode = 'body' | 'strict' | 'plain';

/**
 * Writes `value` at `trail` as JSON text. `ancestors` holds the objects above it (a cycle is
 * refused, a value repeated side by side is written twice, as JSON.stringify does).
 */
function write(value: unknown, trail: Trail, ancestors: Set<object>, mode: Mode): string {
  if (mode === 'body' && trail.length <= 3 && committedAt(trail))
    return writeCommitted(value, trail, ancestors);
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value))
        refuseHere(mode, trail, 'the string holds a lone UTF-16 surrogate, which UTF-8 cannot carry');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) refuseHere(mode, trail, `${value} has no JSON form (RFC 8259 §6)`);
      return Object.is(value, -0) ? '-0' : JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return refuseHere(mode, trail, `a ${typeof value} has no JSON form`);
    default:
      break;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) refuseHere(mode, trail, 'the value contains itself (a cycle)');
  const prototype = Object.getPrototypeOf(object);
  if (prototype === Array.prototype) return writeArray(object as unknown[], trail, ancestors, mode);
  if (prototype !== Object.prototype && prototype !== null) {
    if (isLosslessNumber(object)) return (object as { value: string }).value;
    if (mode === 'plain') throw NOT_PLAIN;
    if (OPAQUE.some((type) => object instanceof type) || ArrayBuffer.isView(object))
      refuseHere(mode, trail, `${describe(object)} has no JSON form`);
    if (Array.isArray(object)) return writeArray(object, trail, ancestors, mode);
  }
  const withJson = object as { toJSON?: (key: string) => unknown };
  if (typeof withJson.toJSON === 'function') {
    if (mode === 'plain') throw NOT_PLAIN;
    // The value's own JSON form (a Date writes its ISO text), as JSON.stringify does.
    ancestors.add(object);
    try {
      return write(withJson.toJSON(''), trail, ancestors, mode);
    } finally {
      ancestors.delete(object);
    }
  }
  ancestors.add(object);
  let text = '{';
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = (object as Record<string, unknown>)[key];
    // An absent optional field, as JSON.stringify leaves it out.
    if (item === undefined) continue;
    trail.push(key);
    if (!wellFormed(key))
      refuseHere(mode, trail, 'the key holds a lone UTF-16 surrogate, which UTF-8 cannot carry');
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${write(item, trail, ancestors, mode)}`;
    trail.pop();
  }
  ancestors.delete(object);
  return `${text}}`;
}

function writeArray(array: unknown[], trail: Trail, ancestors: Set<object>, mode: Mode): string {
  ancestors.add(array);
  let text = '[';
  for (let index = 0; index < array.length; index++) {
    trail.push(index);
    if (!(index in array)) refuseHere(mode, trail, 'a hole in a sparse array has no JSON form');
    text += `${index > 0 ? ',' : ''}${write(array[index], trail, ancestors, mode)}`;
    trail.pop();
  }
  ancestors.delete(array);
  return `${text}]`;
}

/** Refuses the value at `trail` (in `plain` mode: throws {@link NOT_PLAIN}, to normalise it). */
function refuseHere(mode: Mode, trail: Trail, reason: string): never {
  if (mode === 'plain') throw NOT_PLAIN;
  return refuse(trail, reason);
}

/**
 * A committed value: as it is when it is plain JSON (big integers keep their digits: the server
 * keeps them and applies the rule itself, to the same raw text), else the `callgate-normalize/1`
 * marker core's rule makes of it as the server would read it.
 */
function writeCommitted(value: unknown, trail: Trail, ancestors: Set<object>): string {
  const depth = trail.length;
  try {
    // Its own set of ancestors: one left behind by a throw here must not stay in the body's.
    return write(value, trail, new Set(), 'plain');
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    trail.length = depth;
  }
  // Core's marker; or, when core's rule finds nothing to mark (a function as an object's field,
  // which it leaves out), the value written strictly, which refuses what has no JSON form.
  return write(recordable(asSent(value, new Map())).value, trail, ancestors, 'strict');
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
  return write(body, [], new Set(), normalize ? 'body' : 'strict');
}

/**
 * The number an answer's digits stand for: a `bigint` for an integer a double cannot hold. A
 * decimal a double does not hold exactly (`1e-400`; callgate writes none) is refused, not rounded.
 */
function readNumber(digits: string): number | bigint {
  const number = Number(digits);
  if (!Number.isFinite(number))
    throw new CallgateError('internal', `the number ${digits} in callgate's answer is out of range`);
  if (!Number.isSafeInteger(number) && /^-?\d+$/.test(digits)) return BigInt(digits);
  if (!numberHeldExactly(digits))
    throw new CallgateError(
      'internal',
      `the number ${digits} in callgate's answer has more digits than a double holds`,
    );
  return number;
}

/**
 * A server's answer (JSON text) read losslessly: an integer beyond ±(2^53−1) is a `bigint` with
 * every digit (JSON.parse would round it), other numbers are numbers; a key given twice with
 * different values, the `NaN` / `Infinity` tokens, a number out of a double's range and a decimal
 * whose digits a double does not hold exactly (core's `numberHeldExactly`) are refused.
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
