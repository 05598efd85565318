// One reader for every whole number callgate takes from a person: a policy's or callgate.yaml's
// counts and ports, and the command line's numeric options. A number is taken only when it is
// exactly the number written (docs/ledger.md, invariant 4): a whole number a double holds with its
// neighbours apart (at most 2^53 − 1), not a fraction, not text. The messages say which of these
// failed and quote the value; the caller names the field or option.

/** The bounds a whole number must lie within, inclusive. */
export interface WholeNumberBounds {
  minimum: number;
  /** Default `Number.MAX_SAFE_INTEGER`. */
  maximum?: number;
}

/** A whole number as decimal digits: no sign but `-`, no leading zero, no fraction, exponent, `_`. */
const DECIMAL_DIGITS = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * Why `written` is not a whole number spelled in decimal digits, or undefined: `-0`, `010`, `+5`,
 * `0x10`, `0o10`, `7.0`, `1e2`, `1_000` all stand for whole numbers a reader may take, but each
 * reader takes some of them differently (`010` is 8 to some), so callgate takes none of them.
 */
function spellingProblem(written: string): string | undefined {
  if (/^-0+$/.test(written))
    return `expected a whole number written in decimal digits (got ${written}: zero has no sign)`;
  if (/^-?0[0-9]/.test(written))
    return `expected a whole number written in decimal digits without a leading zero (got ${written})`;
  if (!DECIMAL_DIGITS.test(written))
    return `expected a whole number written in decimal digits (got ${written})`;
  return undefined;
}

const beyondSafe = (written: string) =>
  `${written} is beyond the largest safe integer, ${Number.MAX_SAFE_INTEGER} (2^53 − 1): past it a double cannot hold every whole number, so it would not be read as written`;

function quoted(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string')
    return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  return String(value);
}

function outOfBounds(value: number, written: string, bounds: WholeNumberBounds): string | undefined {
  if (value < bounds.minimum) return `expected a whole number, ${bounds.minimum} or more (got ${written})`;
  if (bounds.maximum !== undefined && value > bounds.maximum)
    return `expected a whole number, at most ${bounds.maximum} (got ${written})`;
  return undefined;
}

/**
 * Why `value` (as a YAML or JSON reader gave it) is not a whole number within `bounds`, or
 * undefined when it is.
 *
 * @param written the number as its source wrote it (the digits, not the double), quoted by the
 *   messages and held to decimal digits: a YAML `0x10`, `0o10`, `+5`, `7.0`, `1e2` or `010`
 *   reads as a whole number but is refused, as is `-0`; default `String(value)`.
 * @returns a sentence: the value is not a number (`the text "1"`), not whole (`1.5`, `Infinity`),
 *   beyond 2^53 − 1, not written in decimal digits, or outside `bounds`.
 */
export function wholeNumberProblem(
  value: unknown,
  bounds: WholeNumberBounds,
  written: string = typeof value === 'number' ? String(value) : quoted(value),
): string | undefined {
  if (typeof value !== 'number') return `expected a whole number (got ${written})`;
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    // A huge negative count is wrong for its sign before its size, when negatives are not allowed.
    if (value < 0 && bounds.minimum >= 0) return outOfBounds(value, written, bounds);
    return beyondSafe(written);
  }
  if (!Number.isInteger(value)) return `expected a whole number (got ${written})`;
  if (Object.is(value, -0)) return spellingProblem(/^-0+$/.test(written) ? written : '-0');
  return spellingProblem(written) ?? outOfBounds(value, written, bounds);
}

/**
 * A whole number written as decimal digits (`10`; not `1e3`, `0x10`, `2.0`, ` 5`, `+5`, `-0` or
 * `010`), as a
 * command line or a query string gives one, held to `bounds`.
 *
 * @returns `{ value }`, or `{ problem }`: a sentence quoting `text` (digits past 2^53 − 1 quoted as
 *   written, never as the double they would round to).
 */
export function readWholeNumber(
  text: string,
  bounds: WholeNumberBounds,
): { value: number } | { problem: string } {
  if (!/^-?\d+$/.test(text))
    return { problem: `expected a whole number written in digits (got ${JSON.stringify(text)})` };
  if (BigInt(text) > BigInt(Number.MAX_SAFE_INTEGER)) return { problem: beyondSafe(text) };
  const value = Number(text);
  const problem = wholeNumberProblem(value, bounds, text);
  return problem === undefined ? { value } : { problem };
}
