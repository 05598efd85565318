// Whether a JSON number token is held exactly by the double it parses to. A token is held exactly
// when its decimal value equals the value of that double's ECMAScript Number::toString text (the
// RFC 8785 form): `1.10`, `1.0`, `1E2` and `0.1` are (another spelling of the same number), while
// `1000.00000000000001`, `1e-400` (underflow to 0) and `2.0000000000000001` are not: the gate would
// see, and the ledger record, another number than the client sent. See docs/ledger.md, invariant 4.

/** A decimal value as sign, significant digits (no leading or trailing zero) and exponent. */
interface Decimal {
  negative: boolean;
  /** The significant digits; empty for zero. */
  digits: string;
  /** The power of ten the digits are scaled by: value = ±digits × 10^exponent. */
  exponent: number;
}

/**
 * The exact decimal value of a JSON number token (RFC 8259 §6, or the `1e+21` of Number::toString),
 * compared as text, never through a double. An exponent too long for a double to count exactly is
 * kept approximately: no double's text has one, so it still compares unequal.
 */
function decimalOf(text: string): Decimal {
  let start = 0;
  const negative = text.charCodeAt(0) === 45; // '-'
  if (negative) start = 1;
  let end = text.indexOf('e', start);
  if (end < 0) end = text.indexOf('E', start);
  const exponentText = end < 0 ? '' : text.slice(end + 1);
  const mantissa = end < 0 ? text.slice(start) : text.slice(start, end);
  const dot = mantissa.indexOf('.');
  let digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  let exponent = (exponentText === '' ? 0 : Number(exponentText)) - (dot < 0 ? 0 : mantissa.length - dot - 1);
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 48) first++;
  if (first === digits.length) return { negative: false, digits: '', exponent: 0 };
  let last = digits.length;
  while (digits.charCodeAt(last - 1) === 48) last--;
  exponent += digits.length - last;
  digits = digits.slice(first, last);
  return { negative, digits, exponent };
}

/** How many digits `text` has, and whether it has a fraction or an exponent. */
function shape(text: string): { digits: number; fraction: boolean; exponent: boolean } {
  let digits = 0;
  let fraction = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 48 && code <= 57) digits++;
    else if (code === 46) fraction = true;
    else if (code === 101 || code === 69) return { digits, fraction, exponent: true };
  }
  return { digits, fraction, exponent: false };
}

/**
 * True when the number token `text` has a fraction or an exponent and may not be held exactly by
 * its double: it has an exponent, or more than 15 digits. A token with a fraction, no exponent and
 * 15 digits or fewer always is (15 significant digits survive a double, IEEE 754 binary64 DBL_DIG,
 * and such a value is far inside the normal range). A token with neither fraction nor exponent is
 * an integer: false here, as the integer rule (±(2^53−1)) decides it. The cheap test a fast path
 * runs on every number token before {@link numberHeldExactly}.
 */
export function exactnessInDoubt(text: string): boolean {
  const { digits, fraction, exponent } = shape(text);
  return exponent || (fraction && digits > 15);
}

/**
 * True when the JSON number token `text` (RFC 8259 §6 grammar, not checked here) is held exactly by
 * the double `Number(text)`: its decimal value equals that of the double's Number::toString text
 * (ECMA-262 §6.1.6.1.20, the form RFC 8785 writes), compared as exact decimals. False for a token
 * out of a double's range (`1e400`), one that underflows (`1e-400` reads as 0), one whose digits a
 * double rounds (`0.1000000000000000000001`, `9007199254740993`). Zero is zero whatever its sign
 * (`-0.0` is held exactly).
 */
export function numberHeldExactly(text: string): boolean {
  const { digits, exponent } = shape(text);
  if (!exponent && digits <= 15) return true;
  const number = Number(text);
  if (!Number.isFinite(number)) return false;
  const written = String(number);
  // The usual case: a double as JavaScript (or any shortest-digits writer) wrote it.
  if (written === text) return true;
  const sent = decimalOf(text);
  const held = decimalOf(written);
  return sent.digits === held.digits && sent.exponent === held.exponent && sent.negative === held.negative;
}
