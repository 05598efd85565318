// The byte-level scan of the record-line reader (`record-line-reader.ts`): strict RFC 8785
// canonical JSON over ASCII bytes, reading in place and making no string. Each function takes the
// bytes and the line's end `end` (so no module variable is read in the byte loops) and answers
// the index after what it read, or -1 for "not sure" (not canonical, not ASCII, not JSON: the
// reference check decides). Side results go to the small typed arrays below.
import { KEY_BYTES } from './record-line-shape.js';

const QUOTE = 34;
const BACKSLASH = 92;
/** Per byte: 1 when it may stand unescaped in a canonical ASCII string (0x20-0x7e but `"` and `\`). */
const PLAIN = new Uint8Array(256);
for (let code = 0x20; code < 0x7f; code++) PLAIN[code] = code === QUOTE || code === BACKSLASH ? 0 : 1;
/** Per byte: -1 (all bits) for a lowercase hex digit, else 0, so `run = (run + 1) & HEX_MASK[code]`. */
const HEX_MASK = new Int32Array(256);
for (const digit of '0123456789abcdef') HEX_MASK[digit.charCodeAt(0)] = -1;
/** The letters JSON.stringify writes after a backslash (RFC 8785 §3.2.2.2). */
const SHORT = new Uint8Array(256);
for (const letter of '"\\bfnrt') SHORT[letter.charCodeAt(0)] = 1;
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
export function stringEnd(bytes: Uint8Array, at: number, end: number): number {
  let escaped = 0;
  let run = 0;
  let i = at + 1;
  for (;;) {
    const code = bytes[i] as number;
    if (PLAIN[code] === 1) {
      run = (run + 1) & (HEX_MASK[code] as number);
      i += 1;
      continue;
    }
    // Past the end of `bytes` (undefined) or of the line, a control byte, a non-ASCII byte: not sure.
    if (code === QUOTE) break;
    if (code !== BACKSLASH || i >= end) return -1;
    escaped = 1;
    run = 0;
    const letter = bytes[i + 1] as number;
    if (SHORT[letter] === 1) {
      i += 2;
      continue;
    }
    // \u00xx with lowercase hex, only for a control that has no one-letter escape.
    if (letter !== 117 || bytes[i + 2] !== 48 || bytes[i + 3] !== 48) return -1;
    const high = bytes[i + 4] as number;
    const low = bytes[i + 5] as number;
    if ((high !== 48 && high !== 49) || HEX_MASK[low] === 0) return -1;
    const control = (high - 48) * 16 + (low <= 57 ? low - 48 : low - 87);
    if (control === 8 || control === 9 || control === 10 || control === 12 || control === 13) return -1;
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
export function numberEnd(bytes: Uint8Array, at: number, end: number): number {
  let i = at;
  const negative = bytes[i] === 45;
  if (negative) i += 1;
  const first = bytes[i] as number;
  if (!(first >= 48 && first <= 57)) return -1;
  let value = 0;
  let digits = 0;
  if (first === 48) {
    i += 1;
    const next = bytes[i] as number;
    if (next >= 48 && next <= 57) return -1;
  } else {
    while (i < end) {
      const code = bytes[i] as number;
      if (code < 48 || code > 57) break;
      value = value * 10 + (code - 48);
      digits += 1;
      i += 1;
    }
  }
  if (i < end && bytes[i] === 46) {
    const fraction = i + 1;
    i = fraction;
    while (i < end && (bytes[i] as number) >= 48 && (bytes[i] as number) <= 57) i += 1;
    if (i === fraction || bytes[i - 1] === 48) return -1;
    let significant = digits;
    if (first === 48) {
      let lead = fraction;
      while (lead < i && bytes[lead] === 48) lead += 1;
      if (lead - fraction > 5) return -1;
      significant = i - lead;
    } else significant += i - fraction;
    if (significant > 15) return -1;
    // At most 15 significant digits: the double nearest the text prints back as the text.
    outNumber[0] = Number(String.fromCharCode(...bytes.subarray(at, i)));
  } else {
    if ((first === 48 && negative) || digits > 15) return -1;
    outNumber[0] = negative ? -value : value;
  }
  if (i >= end) return -1;
  const next = bytes[i];
  return next === 44 || next === 125 || next === 93 ? i : -1;
}

/** Whether bytes[aStart, aEnd) sorts strictly before bytes[bStart, bEnd) (ASCII: bytes are UTF-16 units). */
function before(bytes: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  const length = Math.min(aEnd - aStart, bEnd - bStart);
  for (let i = 0; i < length; i++) {
    const x = bytes[aStart + i] as number;
    const y = bytes[bStart + i] as number;
    if (x !== y) return x < y;
  }
  return aEnd - aStart < bEnd - bStart;
}

/** The end of the canonical JSON value at `at`, nested `depth` deep, or -1. */
export function valueEnd(bytes: Uint8Array, at: number, end: number, depth: number): number {
  const code = bytes[at];
  if (code === QUOTE) return stringEnd(bytes, at, end);
  if (code === 123) return objectEnd(bytes, at, end, depth + 1);
  if (code === 91) {
    if (depth + 1 >= MAX_DEPTH) return -1;
    let i = at + 1;
    if (bytes[i] === 93) return i + 1;
    for (;;) {
      i = valueEnd(bytes, i, end, depth + 1);
      if (i < 0 || i >= end) return -1;
      const next = bytes[i];
      if (next === 93) return i + 1;
      if (next !== 44) return -1;
      i += 1;
    }
  }
  // A literal is followed by `,`, `]` or `}` inside the line: its end is before `end`.
  if (code === 116)
    return at + 4 < end && bytes[at + 1] === 114 && bytes[at + 2] === 117 && bytes[at + 3] === 101
      ? at + 4
      : -1;
  if (code === 102)
    return at + 5 < end &&
      bytes[at + 1] === 97 &&
      bytes[at + 2] === 108 &&
      bytes[at + 3] === 115 &&
      bytes[at + 4] === 101
      ? at + 5
      : -1;
  if (code === 110)
    return at + 4 < end && bytes[at + 1] === 117 && bytes[at + 2] === 108 && bytes[at + 3] === 108
      ? at + 4
      : -1;
  return numberEnd(bytes, at, end);
}

/** The end of the canonical object at `at` (keys unescaped, strictly increasing), or -1. */
function objectEnd(bytes: Uint8Array, at: number, end: number, depth: number): number {
  if (depth >= MAX_DEPTH) return -1;
  let i = at + 1;
  if (bytes[i] === 125) return i + 1;
  let previousStart = -1;
  let previousEnd = -1;
  for (;;) {
    if (bytes[i] !== QUOTE) return -1;
    const keyStop = stringEnd(bytes, i, end);
    if (keyStop < 0 || HEX_RUN[0] === 1) return -1;
    if (previousStart >= 0 && !before(bytes, previousStart, previousEnd, i + 1, keyStop - 1)) return -1;
    previousStart = i + 1;
    previousEnd = keyStop - 1;
    if (bytes[keyStop] !== 58) return -1;
    i = valueEnd(bytes, keyStop + 1, end, depth);
    if (i < 0 || i >= end) return -1;
    const next = bytes[i];
    if (next === 125) return i + 1;
    if (next !== 44) return -1;
    i += 1;
  }
}

/** The id of the key spelled bytes[start, stop) (no escape), searching ids from `from`; or -1. */
export function keyIdOf(bytes: Uint8Array, start: number, stop: number, from = 0): number {
  const length = stop - start;
  for (let id = from; id < KEY_BYTES.length; id++) {
    const key = KEY_BYTES[id] as Uint8Array;
    if (key.length !== length) continue;
    let i = 0;
    while (i < length && bytes[start + i] === key[i]) i += 1;
    if (i === length) return id;
  }
  return -1;
}

/**
 * The id of the key whose opening quote is at `at` when it is a record schema's key with an id
 * above `after` (keys sorted, none twice: ids strictly increase, as KEY_BYTES is sorted); its end
 * (after the closing quote) in `HEX_RUN[1]`. Else -1: an unknown, escaped or out-of-order key.
 */
export function keyAt(bytes: Uint8Array, at: number, end: number, after: number): number {
  // Usually one compare: the key that followed the previous one last time.
  const guess = successor[after + 1] as number;
  if (guess > after) {
    const key = KEY_BYTES[guess] as Uint8Array;
    const length = key.length;
    let i = 0;
    while (i < length && bytes[at + 1 + i] === key[i]) i += 1;
    if (i === length && bytes[at + 1 + length] === QUOTE && at + 2 + length < end) {
      HEX_RUN[1] = at + 2 + length;
      return guess;
    }
  }
  const keyStop = stringEnd(bytes, at, end);
  if (keyStop < 0 || HEX_RUN[0] === 1) return -1;
  const id = keyIdOf(bytes, at + 1, keyStop - 1, after + 1);
  if (id < 0) return -1;
  successor[after + 1] = id;
  HEX_RUN[1] = keyStop;
  return id;
}
