// The byte-level scan of the record-line reader (`record-line-reader.ts`): strict RFC 8785
// canonical JSON over ASCII bytes, reading in place and making no string. Each function takes the
// bytes `b` and the line's end `end` (so no module variable is read in the byte loops) and answers
// the index after what it read, or -1 for "not sure" (not canonical, not ASCII, not JSON: the
// reference check decides). Side results go to the small typed arrays below.
import { KEY_BYTES } from './record-line-shape.js';

const QUOTE = 34;
const BACKSLASH = 92;
/** Per byte: 1 when it may stand unescaped in a canonical ASCII string (0x20-0x7e but `"` and `\`). */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 0x7f; c++) PLAIN[c] = c === QUOTE || c === BACKSLASH ? 0 : 1;
/** Per byte: -1 (all bits) for a lowercase hex digit, else 0, so `run = (run + 1) & HEX_MASK[c]`. */
const HEX_MASK = new Int32Array(256);
for (const c of '0123456789abcdef') HEX_MASK[c.charCodeAt(0)] = -1;
/** The letters JSON.stringify writes after a backslash (RFC 8785 §3.2.2.2). */
const SHORT = new Uint8Array(256);
for (const c of '"\\bfnrt') SHORT[c.charCodeAt(0)] = 1;
/** The deepest nesting followed; deeper is "not sure". */
const MAX_DEPTH = 32;

/**
 * After `stringEnd`: [0] 1 when the string had an escape, else 0; [1] how many lowercase hex
 * digits end it (a digest's 64). After `keyAt`: [1] the index after the key's closing quote.
 */
export const HEX_RUN = new Int32Array(2);
/** After `numberEnd`: [0] the number's value. */
export const outNumber = new Float64Array(1);
/** Per key id before the first: the id that followed it last (learned), tried first by `keyAt`. */
const successor = new Int32Array(KEY_BYTES.length + 1);

/** The index after the string whose opening quote is at `at`, or -1. */
export function stringEnd(b: Uint8Array, at: number, end: number): number {
  let escaped = 0;
  let run = 0;
  let i = at + 1;
  for (;;) {
    const c = b[i] as number;
    if (PLAIN[c] === 1) {
      run = (run + 1) & (HEX_MASK[c] as number);
      i += 1;
      continue;
    }
    // Past the end of `b` (undefined) or of the line, a control byte, a non-ASCII byte: not sure.
    if (c === QUOTE) break;
    if (c !== BACKSLASH || i >= end) return -1;
    escaped = 1;
    run = 0;
    const letter = b[i + 1] as number;
    if (SHORT[letter] === 1) {
      i += 2;
      continue;
    }
    // \u00xx with lowercase hex, only for a control that has no one-letter escape.
    if (letter !== 117 || b[i + 2] !== 48 || b[i + 3] !== 48) return -1;
    const high = b[i + 4] as number;
    const low = b[i + 5] as number;
    if ((high !== 48 && high !== 49) || HEX_MASK[low] === 0) return -1;
    const code = (high - 48) * 16 + (low <= 57 ? low - 48 : low - 87);
    if (code === 8 || code === 9 || code === 10 || code === 12 || code === 13) return -1;
    i += 6;
  }
  if (i >= end) return -1;
  HEX_RUN[0] = escaped;
  HEX_RUN[1] = run;
  return i + 1;
}

/**
 * The end of the number at `at` when its text is certainly the ECMAScript form of its value
 * (RFC 8785 §3.2.2.3: no exponent, no leading zero, no -0, no trailing zero in a fraction, at most
 * 15 significant digits, at most 5 zeros after "0."), its value in `outNumber[0]`; else -1.
 */
export function numberEnd(b: Uint8Array, at: number, end: number): number {
  let i = at;
  const negative = b[i] === 45;
  if (negative) i += 1;
  const first = b[i] as number;
  if (!(first >= 48 && first <= 57)) return -1;
  let value = 0;
  let digits = 0;
  if (first === 48) {
    i += 1;
    const next = b[i] as number;
    if (next >= 48 && next <= 57) return -1;
  } else {
    while (i < end) {
      const c = b[i] as number;
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
      digits += 1;
      i += 1;
    }
  }
  if (i < end && b[i] === 46) {
    const fraction = i + 1;
    i = fraction;
    while (i < end && (b[i] as number) >= 48 && (b[i] as number) <= 57) i += 1;
    if (i === fraction || b[i - 1] === 48) return -1;
    let significant = digits;
    if (first === 48) {
      let lead = fraction;
      while (lead < i && b[lead] === 48) lead += 1;
      if (lead - fraction > 5) return -1;
      significant = i - lead;
    } else significant += i - fraction;
    if (significant > 15) return -1;
    // At most 15 significant digits: the double nearest the text prints back as the text.
    outNumber[0] = Number(String.fromCharCode(...b.subarray(at, i)));
  } else {
    if ((first === 48 && negative) || digits > 15) return -1;
    outNumber[0] = negative ? -value : value;
  }
  if (i >= end) return -1;
  const next = b[i];
  return next === 44 || next === 125 || next === 93 ? i : -1;
}

/** Whether b[aStart, aEnd) sorts strictly before b[bStart, bEnd) (ASCII: bytes are UTF-16 units). */
function before(b: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  const length = Math.min(aEnd - aStart, bEnd - bStart);
  for (let i = 0; i < length; i++) {
    const x = b[aStart + i] as number;
    const y = b[bStart + i] as number;
    if (x !== y) return x < y;
  }
  return aEnd - aStart < bEnd - bStart;
}

/** The end of the canonical JSON value at `at`, nested `depth` deep, or -1. */
export function valueEnd(b: Uint8Array, at: number, end: number, depth: number): number {
  const c = b[at];
  if (c === QUOTE) return stringEnd(b, at, end);
  if (c === 123) return objectEnd(b, at, end, depth + 1);
  if (c === 91) {
    if (depth + 1 >= MAX_DEPTH) return -1;
    let i = at + 1;
    if (b[i] === 93) return i + 1;
    for (;;) {
      i = valueEnd(b, i, end, depth + 1);
      if (i < 0 || i >= end) return -1;
      const next = b[i];
      if (next === 93) return i + 1;
      if (next !== 44) return -1;
      i += 1;
    }
  }
  // A literal is followed by `,`, `]` or `}` inside the line: its end is before `end`.
  if (c === 116)
    return at + 4 < end && b[at + 1] === 114 && b[at + 2] === 117 && b[at + 3] === 101 ? at + 4 : -1;
  if (c === 102)
    return at + 5 < end && b[at + 1] === 97 && b[at + 2] === 108 && b[at + 3] === 115 && b[at + 4] === 101
      ? at + 5
      : -1;
  if (c === 110)
    return at + 4 < end && b[at + 1] === 117 && b[at + 2] === 108 && b[at + 3] === 108 ? at + 4 : -1;
  return numberEnd(b, at, end);
}

/** The end of the canonical object at `at` (keys unescaped, strictly increasing), or -1. */
function objectEnd(b: Uint8Array, at: number, end: number, depth: number): number {
  if (depth >= MAX_DEPTH) return -1;
  let i = at + 1;
  if (b[i] === 125) return i + 1;
  let previousStart = -1;
  let previousEnd = -1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyStop = stringEnd(b, i, end);
    if (keyStop < 0 || HEX_RUN[0] === 1) return -1;
    if (previousStart >= 0 && !before(b, previousStart, previousEnd, i + 1, keyStop - 1)) return -1;
    previousStart = i + 1;
    previousEnd = keyStop - 1;
    if (b[keyStop] !== 58) return -1;
    i = valueEnd(b, keyStop + 1, end, depth);
    if (i < 0 || i >= end) return -1;
    const next = b[i];
    if (next === 125) return i + 1;
    if (next !== 44) return -1;
    i += 1;
  }
}

/** The id of the key spelled b[start, stop) (no escape), searching ids from `from`; or -1. */
export function keyIdOf(b: Uint8Array, start: number, stop: number, from = 0): number {
  const length = stop - start;
  for (let id = from; id < KEY_BYTES.length; id++) {
    const key = KEY_BYTES[id] as Uint8Array;
    if (key.length !== length) continue;
    let i = 0;
    while (i < length && b[start + i] === key[i]) i += 1;
    if (i === length) return id;
  }
  return -1;
}

/**
 * The id of the key whose opening quote is at `at` when it is a record schema's key with an id
 * above `after` (keys sorted, none twice: ids strictly increase, as KEY_BYTES is sorted); its end
 * (after the closing quote) in `HEX_RUN[1]`. Else -1: an unknown, escaped or out-of-order key.
 */
export function keyAt(b: Uint8Array, at: number, end: number, after: number): number {
  // Usually one compare: the key that followed the previous one last time.
  const guess = successor[after + 1] as number;
  if (guess > after) {
    const key = KEY_BYTES[guess] as Uint8Array;
    const length = key.length;
    let i = 0;
    while (i < length && b[at + 1 + i] === key[i]) i += 1;
    if (i === length && b[at + 1 + length] === QUOTE && at + 2 + length < end) {
      HEX_RUN[1] = at + 2 + length;
      return guess;
    }
  }
  const keyStop = stringEnd(b, at, end);
  if (keyStop < 0 || HEX_RUN[0] === 1) return -1;
  const id = keyIdOf(b, at + 1, keyStop - 1, after + 1);
  if (id < 0) return -1;
  successor[after + 1] = id;
  HEX_RUN[1] = keyStop;
  return id;
}
