// A client's JSON-RPC text read at native speed when that is provably lossless. The gateway's
// rule is that the digits a client sent are the digits the gate sees, and that a key given twice
// is refused: core's `parseJsonLossless` (a JavaScript parser that sees every number's digits)
// guarantees both, at several times the cost of `JSON.parse`. Most messages hold no number a
// double rounds and no repeated key, and for those the two parsers give the same value; this
// file tells which messages those are, cheaply, so the lossless parser runs only on the others.
import { numberHeldExactly } from '@callgate/core/json';

/** Object keys the lossless path refuses anywhere in a value (see core's safe-json). */
const POLLUTING_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Returned by {@link parseJsonFast} when only the lossless parser may read the text. */
export const NEEDS_LOSSLESS: unique symbol = Symbol('needs-lossless');

/**
 * The members (`"key": value` pairs) written in `text`, counted as the colons outside strings;
 * -1 when the text nests deeper than `maxDepth` (the lossless path refuses it, saying where) or
 * holds a number token with a fraction or exponent whose digits its double does not hold
 * (`1000.00000000000001`, `1e-400`; see core's `numberHeldExactly`): `JSON.parse` would round it
 * silently. Only a token with an exponent, or with a fraction and more than 15 digits, is checked.
 */
function membersWritten(text: string, maxDepth: number): number {
  let members = 0;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92)
        index++; // backslash: skip the escaped character
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 58) members++;
    else if (code === 45 || (code >= 48 && code <= 57)) {
      // A number token: read to its end, once, noting a fraction or an exponent. Its length bounds
      // its digits: a token of 16 characters or fewer has at most 15 digits after a `.`.
      let end = index + 1;
      let fraction = false;
      let exponent = false;
      for (; end < text.length; end++) {
        const character = text.charCodeAt(end);
        if (character >= 48 && character <= 57) continue;
        if (character === 46) fraction = true;
        else if (character === 101 || character === 69) exponent = true;
        else if (character !== 43 && character !== 45) break;
      }
      if ((exponent || (fraction && end - index > 16)) && !numberHeldExactly(text.slice(index, end)))
        return -1;
      index = end - 1;
    } else if (code === 123 || code === 91) {
      if (++depth > maxDepth) return -1;
    } else if (code === 125 || code === 93) depth--;
  }
  return members;
}

/**
 * The members of `value` (own keys of every object in it), or -1 when `value` holds something
 * the lossless path reads differently: a number that is not finite or an integer beyond
 * ±(2^53−1) (`JSON.parse` rounded its digits), `-0` (whose sign `JSON.stringify` drops), or a
 * key the lossless path refuses.
 */
function membersParsed(value: unknown): number {
  if (typeof value === 'number') {
    // -0 too: `JSON.stringify` writes it `0`; the lossless path keeps its sign (exact-json.ts).
    return Number.isFinite(value) &&
      (!Number.isInteger(value) || Number.isSafeInteger(value)) &&
      !Object.is(value, -0)
      ? 0
      : -1;
  }
  if (value === null || typeof value !== 'object') return 0;
  let members = 0;
  if (Array.isArray(value)) {
    for (const item of value) {
      const inner = membersParsed(item);
      if (inner < 0) return -1;
      members += inner;
    }
    return members;
  }
  for (const key in value) {
    if (POLLUTING_KEYS.has(key)) return -1;
    const inner = membersParsed((value as Record<string, unknown>)[key]);
    if (inner < 0) return -1;
    members += inner + 1;
  }
  return members;
}

/**
 * `JSON.parse(text)` when that value is exactly what the lossless parser would return: the text
 * is valid JSON nested at most `maxDepth` deep, every number in it is a finite double that is
 * not an integer beyond ±(2^53−1) and whose digits the double holds exactly (so `JSON.parse` kept
 * its value; the lossless path turns such numbers into the same doubles), no object lost a member to a repeated key (the members
 * written equal the members parsed), and no key is one the lossless path refuses. Otherwise
 * {@link NEEDS_LOSSLESS}: the caller parses losslessly, which keeps the digits or refuses
 * with a message saying what and where.
 */
export function parseJsonFast(text: string, maxDepth: number): unknown {
  const written = membersWritten(text, maxDepth);
  if (written < 0) return NEEDS_LOSSLESS;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return NEEDS_LOSSLESS;
  }
  return membersParsed(value) === written ? value : NEEDS_LOSSLESS;
}
