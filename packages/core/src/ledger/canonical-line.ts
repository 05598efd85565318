// A one-pass check that a line of JSON text is already in its RFC 8785 canonical form, for the
// record lines of a bundle file: no whitespace, every object's keys in strictly increasing UTF-16
// order (so none twice), strings escaped as ECMAScript's JSON.stringify escapes them, integers in
// their shortest form. It reads the text in place, making no string or object, and it is
// deliberately narrow: whatever it is not certain of (a key with an escape, an exponent, a
// number of more than 15 significant digits, a lone surrogate) it leaves to the reference check
// (`canonicalOfParsed` of the parse, compared with the line), so it can only agree with it.

/** Char codes the scanner acts on. */
const QUOTE = 34;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const ZERO = 48;
const NINE = 57;

/** The escapes JSON.stringify writes with one letter after the backslash (RFC 8785 §3.2.2.2). */
const SHORT_ESCAPES = new Set(['"', '\\', 'b', 'f', 'n', 'r', 't'].map((letter) => letter.charCodeAt(0)));
/** Control characters JSON.stringify writes as a one-letter escape, not as \u00xx. */
const SHORT_CONTROLS = new Set([8, 9, 10, 12, 13]);
/** The deepest nesting the scanner follows; deeper text is left to the reference check. */
const MAX_DEPTH = 64;

/**
 * Whether `text` has no lone surrogate (ES2024 `String.prototype.isWellFormed`, native in Node 20;
 * immediate for a one-byte string). A lone one, which JSON.stringify writes escaped, leaves the
 * line to the reference check; a pair is written as it is, and keys compare by UTF-16 code units.
 */
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Value of a lowercase hex digit's char code, or -1. */
function lowerHex(code: number): number {
  if (code >= ZERO && code <= NINE) return code - ZERO;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

// The scan's state for the line being read: where its next backslash is (-1: none left; found
// once per backslash, not once per string), and whether the last string read had an escape.
let nextBackslash = -1;
let escaped = false;

/**
 * The end (the index after the closing quote) of the string whose opening quote is at `start`,
 * when every escape in it is the one JSON.stringify would write; else -1. Sets `escaped`.
 */
function canonicalStringEnd(text: string, start: number): number {
  let at = start + 1;
  escaped = false;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return -1;
    if (nextBackslash >= 0 && nextBackslash < at) nextBackslash = text.indexOf('\\', at);
    if (nextBackslash < 0 || nextBackslash > quote) return quote + 1;
    const backslash = nextBackslash;
    escaped = true;
    const letter = text.charCodeAt(backslash + 1);
    if (SHORT_ESCAPES.has(letter)) {
      at = backslash + 2;
      continue;
    }
    if (letter !== 117) return -1; // 'u'
    // Only a control character without a one-letter escape is written \u00xx (lowercase hex).
    if (text.charCodeAt(backslash + 2) !== ZERO || text.charCodeAt(backslash + 3) !== ZERO) return -1;
    const high = lowerHex(text.charCodeAt(backslash + 4));
    const low = lowerHex(text.charCodeAt(backslash + 5));
    if (high < 0 || high > 1 || low < 0 || SHORT_CONTROLS.has(high * 16 + low)) return -1;
    at = backslash + 6;
  }
}

/** Whether text[aStart, aEnd) is before text[bStart, bEnd) in UTF-16 code unit order. */
function before(text: string, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  const length = Math.min(aEnd - aStart, bEnd - bStart);
  for (let i = 0; i < length; i++) {
    const a = text.charCodeAt(aStart + i);
    const b = text.charCodeAt(bStart + i);
    if (a !== b) return a < b;
  }
  return aEnd - aStart < bEnd - bStart;
}

/** The index after the digits from `start` (none: `start`). */
function digitsEnd(text: string, start: number): number {
  let end = start;
  // charCodeAt past the end is NaN, which is neither: the bound is explicit.
  while (end < text.length) {
    const code = text.charCodeAt(end);
    if (code < ZERO || code > NINE) break;
    end += 1;
  }
  return end;
}

/**
 * The end of the number at `start` when its text is certainly the shortest ECMAScript form of its
 * value (RFC 8785 §3.2.2.3); else -1. Certain: no exponent, no leading zero, not -0, no trailing
 * zero in a fraction, at most 15 significant digits (so the text is the one decimal of that
 * length the double rounds to), and no more than 5 zeros after "0." (1e-7 is written so).
 */
function canonicalNumberEnd(text: string, start: number): number {
  const negative = text.charCodeAt(start) === MINUS;
  const integer = negative ? start + 1 : start;
  const integerEnd = digitsEnd(text, integer);
  const integerDigits = integerEnd - integer;
  if (integerDigits === 0) return -1;
  const zero = text.charCodeAt(integer) === ZERO;
  if (zero && integerDigits > 1) return -1;
  let end = integerEnd;
  let significant = zero ? 0 : integerDigits;
  if (text.charCodeAt(end) === 46) {
    // '.'
    const fraction = end + 1;
    end = digitsEnd(text, fraction);
    if (end === fraction || text.charCodeAt(end - 1) === ZERO) return -1;
    if (zero) {
      let leading = fraction;
      while (leading < end && text.charCodeAt(leading) === ZERO) leading += 1;
      if (leading - fraction > 5) return -1;
      significant = end - leading;
    } else significant += end - fraction;
  } else if (zero && negative) return -1; // -0 is written 0
  if (significant > 15) return -1;
  const next = text.charCodeAt(end);
  if (end < text.length && next !== COMMA && next !== CLOSE_OBJECT && next !== CLOSE_ARRAY) return -1;
  return end;
}

// Per nesting depth: 1 for an object, 0 for an array, and the object's previous key's bounds.
const isObject = new Uint8Array(MAX_DEPTH);
const keyStart = new Int32Array(MAX_DEPTH);
const keyEnd = new Int32Array(MAX_DEPTH);

/**
 * True when `text`, which must be valid JSON (e.g. `JSON.parse` accepted it), is certainly the
 * RFC 8785 canonical form of its own parse. False means "not certain": ask the reference check.
 */
export function isCertainlyCanonical(text: string): boolean {
  if (!wellFormed(text)) return false;
  nextBackslash = text.indexOf('\\');
  let depth = -1;
  // After `{` or `,` inside an object, the next string is a key.
  let expectKey = false;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = canonicalStringEnd(text, index);
      if (end < 0) return false;
      if (expectKey) {
        const start = index + 1;
        const stop = end - 1;
        if (escaped) return false;
        const previous = keyStart[depth] as number;
        if (previous >= 0 && !before(text, previous, keyEnd[depth] as number, start, stop)) return false;
        keyStart[depth] = start;
        keyEnd[depth] = stop;
        expectKey = false;
        if (text.charCodeAt(end) !== COLON) return false;
        index = end + 1;
        continue;
      }
      index = end;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth += 1;
      if (depth >= MAX_DEPTH) return false;
      isObject[depth] = code === OPEN_OBJECT ? 1 : 0;
      keyStart[depth] = -1;
      expectKey = code === OPEN_OBJECT;
      index += 1;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth -= 1;
      expectKey = false;
      index += 1;
    } else if (code === COMMA) {
      expectKey = isObject[depth] === 1;
      index += 1;
    } else if (code === MINUS || (code >= ZERO && code <= NINE)) {
      index = canonicalNumberEnd(text, index);
      if (index < 0) return false;
    } else if (code === 116 && text.startsWith('true', index)) index += 4;
    else if (code === 102 && text.startsWith('false', index)) index += 5;
    else if (code === 110 && text.startsWith('null', index)) index += 4;
    // Whitespace, or anything else between tokens.
    else return false;
  }
  return depth === -1;
}
