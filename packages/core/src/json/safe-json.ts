import { CallgateError } from '@callgate/protocol';
import { isLosslessNumber, LosslessNumber, parse as parseLossless } from 'lossless-json';
import { exactnessInDoubt, numberHeldExactly } from './exact-number.js';

/** Limits on a JSON value taken from a model. */
export interface JsonLimits {
  /** Largest accepted size in bytes of the value's JSON text (UTF-8). Default 1 MiB. */
  maxBytes: number;
  /** Deepest accepted nesting of objects and arrays. Default 64. */
  maxDepth: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxBytes: 1024 * 1024, maxDepth: 64 };

/** Object keys refused anywhere in a value: they would pollute prototypes in careless code. */
const POLLUTING_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const refuse = (message: string, path: string): never => {
  throw new CallgateError('tool-args-invalid', message, { path });
};

function describeNumber(text: string, path: string): number {
  const value = Number(text);
  if (notHeld(text)) refuse(numberNotHeldMessage(path, text), path);
  return value;
}

/**
 * Why the number `text` is refused where a tool would see it: out of a double's range, an integer
 * beyond ±(2^53−1) (only a token that is an integer as written, `12345678901234567890` or `1e20`:
 * `123456789012345678.5` is a decimal whose digits a double does not hold, even though it reads
 * as a whole double), or a decimal whose digits a double rounds.
 */
export function numberNotHeldMessage(path: string, text: string): string {
  const number = Number(text);
  if (!Number.isFinite(number))
    return `${path}: the number ${text} is out of a double's range (it would be read as ${String(number)}); send it as a string`;
  const integerAsWritten = /^-?[0-9]+$/.test(text) || numberHeldExactly(text);
  if (integerAsWritten && Number.isInteger(number) && !Number.isSafeInteger(number))
    return `${path}: the integer ${text} is beyond ±(2^53−1): a double does not hold its digits; send it as a string`;
  return `${path}: the number ${text} has digits a double does not hold (it would be read as ${String(number)}); send it as a string`;
}

/**
 * True when a double cannot hold the number token `text` as sent: not finite, an integer beyond
 * ±(2^53−1), or a decimal whose value the double's Number::toString text does not equal.
 */
function notHeld(text: string): boolean {
  const number = Number(text);
  return (
    !Number.isFinite(number) ||
    (Number.isInteger(number) && !Number.isSafeInteger(number)) ||
    (exactnessInDoubt(text) && !numberHeldExactly(text))
  );
}

/**
 * The position where `text` (JSON) first nests deeper than `maxDepth`, or undefined. A scan of
 * brackets outside strings, so absurdly deep text is refused before a recursive parser sees it.
 */
function depthBeyond(text: string, maxDepth: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92)
        index++; // backslash: skip the escaped character
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 123 || code === 91) {
      depth++;
      if (depth > maxDepth) return index;
    } else if (code === 125 || code === 93) depth--;
  }
  return undefined;
}

const childPath = (path: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

type UnsafeIntegers = 'refuse' | 'keep-rounded' | 'keep-lossless';

/**
 * A number kept with the digits as sent because a double cannot hold it (`keep-lossless`). The
 * gate reads `value` (the digits); `JSON.stringify` writes the nearest double, as it would have
 * without the lossless parse, since Node 20 has no way to write raw digits.
 */
class KeptNumber extends LosslessNumber {
  toJSON(): number {
    return Number(this.value);
  }
}

/**
 * Turns the parser's lossless numbers into numbers, refusing by JSON path any that would lose
 * precision (`refuse`), rounding it (`keep-rounded`) or keeping it as the parser's
 * `LosslessNumber`, digits as sent (`keep-lossless`).
 */
function withNumbers(value: unknown, path: string, mode: UnsafeIntegers = 'refuse'): unknown {
  if (isLosslessNumber(value)) {
    if (mode === 'refuse') return describeNumber(value.value, path);
    if (mode === 'keep-lossless' && notHeld(value.value)) return new KeptNumber(value.value);
    return Number(value.value);
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++)
      value[index] = withNumbers(value[index], `${path}[${index}]`, mode);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const at = childPath(path, key);
      // Refused here already: assigning to `__proto__` would set the prototype, not a key.
      if (POLLUTING_KEYS.has(key)) refuse(`${at}: the key "${key}" is not accepted`, at);
      record[key] = withNumbers(record[key], at, mode);
    }
  }
  return value;
}

function lineAndColumn(text: string, position: number): string {
  let line = 1;
  let column = 1;
  for (let index = 0; index < position && index < text.length; index++) {
    if (text.charCodeAt(index) === 10) {
      line++;
      column = 1;
    } else column++;
  }
  return `line ${line}, column ${column}`;
}

/**
 * Parses JSON text taken from a model, seeing every number's original digits (so an integer
 * beyond ±(2^53−1) is refused rather than silently rounded) and refusing duplicate keys.
 * The result also passes {@link checkJsonValue}.
 *
 * @param text JSON text (RFC 8259).
 * @param path what the text is, for messages (e.g. `arguments`).
 * @param options `unsafeIntegers: 'keep-rounded'` keeps integers beyond ±(2^53−1) as the nearest
 *   double (as `JSON.parse` does) instead of refusing the whole text; `'keep-lossless'` keeps them
 *   as lossless-json `LosslessNumber`s holding the digits as sent: for envelopes such as an HTTP
 *   body, whose tool arguments the gate then refuses call by call quoting those digits, and whose
 *   results and messages are committed under `callgate-normalize/1` (see `recordable`).
 * @throws CallgateError `tool-args-invalid` naming the position or the JSON path and the reason.
 */
export function parseJsonStrict(
  text: string,
  path = 'arguments',
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
  options: { unsafeIntegers?: UnsafeIntegers } = {},
): unknown {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes)
    refuse(`${path} is ${bytes} bytes, over the limit of ${limits.maxBytes}`, path);
  const tooDeep = depthBeyond(text, limits.maxDepth);
  if (tooDeep !== undefined) {
    refuse(`${path}: nesting deeper than ${limits.maxDepth} (${lineAndColumn(text, tooDeep)})`, path);
  }
  let value: unknown;
  try {
    value = withNumbers(parseLossless(text), path, options.unsafeIntegers ?? 'refuse');
  } catch (error) {
    if (error instanceof CallgateError) throw error;
    const message = (error as Error).message;
    const match = /position (\d+)/.exec(message);
    const where = match ? ` (${lineAndColumn(text, Number(match[1]))})` : '';
    throw new CallgateError('tool-args-invalid', `${path} is not valid JSON: ${message}${where}`, { path });
  }
  checkJsonValue(value, path, limits, (options.unsafeIntegers ?? 'refuse') !== 'refuse');
  return value;
}

const ANY_SURROGATE = /[\uD800-\uDFFF]/;

function hasLoneSurrogate(value: string): boolean {
  // A native scan first: most strings hold no surrogate at all.
  if (value.length > 32 && !ANY_SURROGATE.test(value)) return false;
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = value.charCodeAt(index + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      index++;
    } else if (code >= 0xdc00 && code <= 0xdfff) return true;
  }
  return false;
}

const keyPath = (path: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/**
 * Checks that `value` is plain JSON a tool may receive: only null, booleans, finite numbers
 * (integers within ±(2^53−1)), strings without lone surrogates, arrays and plain objects; no
 * key `__proto__`, `constructor` or `prototype`; nesting at most `limits.maxDepth`; JSON size
 * at most `limits.maxBytes`. `allowUnsafeIntegers` skips the integer range check (for envelopes
 * whose tool arguments the gate checks on its own).
 *
 * @throws CallgateError `tool-args-invalid` whose message and `details.path` name the value.
 */
export function checkJsonValue(
  value: unknown,
  path = 'arguments',
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
  allowUnsafeIntegers = false,
): void {
  let bytes = 0;
  // The keys and indexes down to the node being checked: its path is spelled out only to refuse it.
  const trail: Array<string | number> = [];
  const where = (): string => {
    let at = path;
    for (const step of trail) at = typeof step === 'number' ? `${at}[${step}]` : keyPath(at, step);
    return at;
  };
  const refuseHere = (reason: string): never => {
    const at = where();
    return refuse(`${at}: ${reason}`, at);
  };
  const visit = (node: unknown, depth: number): void => {
    if (node === null || typeof node === 'boolean') {
      bytes += 5;
    } else if (typeof node === 'number') {
      if (!Number.isFinite(node)) refuseHere(`${node} is not a JSON number`);
      if (!allowUnsafeIntegers && Number.isInteger(node) && !Number.isSafeInteger(node)) {
        refuseHere(`the integer ${node} is beyond ±(2^53−1) and has lost precision; send it as a string`);
      }
      bytes += 8;
    } else if (typeof node === 'string') {
      if (hasLoneSurrogate(node)) refuseHere('the string holds a lone UTF-16 surrogate');
      bytes += node.length + 2;
    } else if (Array.isArray(node)) {
      if (depth >= limits.maxDepth) refuseHere(`nesting deeper than ${limits.maxDepth}`);
      for (let index = 0; index < node.length; index++) {
        const item: unknown = node[index];
        // A hole of a sparse array is skipped, as forEach would.
        if (item === undefined && !(index in node)) continue;
        trail.push(index);
        visit(item, depth + 1);
        trail.pop();
      }
      bytes += node.length + 2;
    } else if (isLosslessNumber(node)) {
      // Kept by the lossless parser: digits as sent, beyond what a double holds.
      if (!allowUnsafeIntegers) {
        const at = where();
        refuse(numberNotHeldMessage(at, node.value), at);
      }
      bytes += node.value.length;
    } else if (typeof node === 'object') {
      const prototype = Object.getPrototypeOf(node);
      if (prototype !== Object.prototype && prototype !== null) {
        refuseHere(`a ${prototype?.constructor?.name ?? 'non-plain'} object is not JSON`);
      }
      if (depth >= limits.maxDepth) refuseHere(`nesting deeper than ${limits.maxDepth}`);
      for (const key of Object.keys(node)) {
        if (POLLUTING_KEYS.has(key)) {
          trail.push(key);
          refuseHere(`the key "${key}" is not accepted`);
        }
        if (hasLoneSurrogate(key)) refuseHere('a key holds a lone UTF-16 surrogate');
        bytes += key.length + 3;
        trail.push(key);
        visit((node as Record<string, unknown>)[key], depth + 1);
        trail.pop();
      }
      bytes += 2;
    } else {
      refuseHere(`a ${typeof node} is not JSON`);
    }
    if (bytes > limits.maxBytes) refuse(`${path} is over the size limit of ${limits.maxBytes} bytes`, path);
  };
  visit(value, 0);
}

/**
 * A tool call's arguments as the model gave them (an object, or JSON text of one), checked and
 * returned as a plain object. `undefined`, `null` and `""` mean no arguments (`{}`).
 *
 * @throws CallgateError `tool-args-invalid` when the text is not JSON, the value is not an
 *   object, or {@link checkJsonValue} refuses it.
 */
export function readArguments(
  input: unknown,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): Record<string, unknown> {
  if (input === undefined || input === null || input === '') return {};
  const value = typeof input === 'string' ? parseJsonStrict(input, 'arguments', limits) : input;
  if (typeof input !== 'string') checkJsonValue(value, 'arguments', limits);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;
    refuse(`arguments must be a JSON object, got ${kind}`, 'arguments');
  }
  return value as Record<string, unknown>;
}

/**
 * Parses a JSON envelope (an HTTP or JSON-RPC body) losslessly, without judging the values inside:
 * an integer beyond ±(2^53−1) keeps its digits (a lossless-json `LosslessNumber`, which
 * {@link checkJsonValue} refuses quoting those digits), a key given twice with different values
 * and the keys `__proto__`, `constructor` and `prototype` are refused, nesting deeper than
 * `limits.maxDepth` is refused before parsing. Strings are kept as sent (lone surrogates
 * included): the gate refuses them where a tool would see them.
 *
 * @throws CallgateError `tool-args-invalid` naming the position or the JSON path and the reason.
 */
export function parseJsonLossless(
  text: string,
  path = 'body',
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): unknown {
  const tooDeep = depthBeyond(text, limits.maxDepth);
  if (tooDeep !== undefined) {
    refuse(`${path}: nesting deeper than ${limits.maxDepth} (${lineAndColumn(text, tooDeep)})`, path);
  }
  try {
    return withNumbers(parseLossless(text), path, 'keep-lossless');
  } catch (error) {
    if (error instanceof CallgateError) throw error;
    const message = (error as Error).message;
    const match = /position (\d+)/.exec(message);
    const where = match ? ` (${lineAndColumn(text, Number(match[1]))})` : '';
    throw new CallgateError('tool-args-invalid', `${path} is not valid JSON: ${message}${where}`, { path });
  }
}
