// The one normalisation rule (`callgate-normalize/1`, and `/2` beside it) for values that have no
// RFC 8785 canonical form, so that a result, a message or an exchange is never a reason to drop a
// record.
import { normalizeReasonSchema } from '@callgate/protocol';
import { isLosslessNumber } from 'lossless-json';
import { sha256Digest } from '../crypto.js';
import { numberHeldExactly } from './exact-number.js';

/** The rule's name, written into every marker whose reasons `/1` knows. */
export const NORMALIZE_RULE = 'callgate-normalize/1' as const;

/**
 * The rule's second version: `/1` with the reason `inexact-number`. Written only into a marker that
 * names that reason, so a marker `/1` can say is written as `/1`, byte for byte as before.
 */
export const NORMALIZE_RULE_2 = 'callgate-normalize/2' as const;

/** Largest JSON text (UTF-8 bytes) committed as it is; a larger value is committed as a marker. */
export const MAX_RECORDED_BYTES = 16 * 1024 * 1024;

/** Why a value had no canonical form. */
export type NormalizeReason =
  | 'lone-surrogate'
  | 'non-finite-number'
  | 'unsafe-integer'
  | 'inexact-number'
  | 'not-json'
  | 'over-size';

/**
 * What is committed in place of a value with no canonical form: `bytes` and `sha256`
 * (`sha256:<hex>`) are over the value's raw JSON text as UTF-8 (NaN/Infinity and big integers as
 * their tokens and digits, lone surrogates as U+FFFD).
 */
export interface NormalizedMarker {
  $callgate: 'normalized';
  /** `callgate-normalize/2` when `reasons` holds `inexact-number`, else `callgate-normalize/1`. */
  rule: typeof NORMALIZE_RULE | typeof NORMALIZE_RULE_2;
  reasons: NormalizeReason[];
  bytes: number;
  sha256: string;
}

/** A value ready to commit, and the reasons it was replaced (empty when it is committed as it is). */
export interface Recordable {
  value: unknown;
  reasons: NormalizeReason[];
}

const MAX_DEPTH = 200;

/** The reasons each version of the rule knows. */
const REASONS: Readonly<Record<string, ReadonlySet<string>>> = {
  [NORMALIZE_RULE]: new Set<NormalizeReason>([
    'lone-surrogate',
    'non-finite-number',
    'unsafe-integer',
    'not-json',
    'over-size',
  ]),
  // `/2` knows every reason the record schema lists.
  [NORMALIZE_RULE_2]: new Set<NormalizeReason>(normalizeReasonSchema.options),
};

const MARKER_KEYS = ['$callgate', 'bytes', 'reasons', 'rule', 'sha256'].join();

/**
 * True when `value` is exactly a `callgate-normalize/1` or `/2` marker: the five fields and no
 * other, a non-empty list of reasons that version knows sorted without repeats (`/2` exactly when
 * they include `inexact-number`), `bytes` a safe non-negative integer,
 * `sha256` as `sha256:<64 lowercase hex>`.
 */
export function isNormalizedMarker(value: unknown): value is NormalizedMarker {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  if (!isPlainObject(value) || Object.keys(value).sort().join() !== MARKER_KEYS) return false;
  const marker = value as Record<string, unknown>;
  const reasons = marker.reasons;
  const known =
    typeof marker.rule === 'string' && Object.hasOwn(REASONS, marker.rule) ? REASONS[marker.rule] : undefined;
  return (
    marker.$callgate === 'normalized' &&
    known !== undefined &&
    Array.isArray(reasons) &&
    reasons.length > 0 &&
    // One spelling per marker: `/2` exactly when a reason only it knows is named.
    (marker.rule === NORMALIZE_RULE_2) === reasons.includes('inexact-number') &&
    reasons.every(
      (reason, index) =>
        typeof reason === 'string' && known.has(reason) && (index === 0 || reasons[index - 1] < reason),
    ) &&
    Number.isSafeInteger(marker.bytes) &&
    (marker.bytes as number) >= 0 &&
    typeof marker.sha256 === 'string' &&
    /^sha256:[0-9a-f]{64}$/.test(marker.sha256)
  );
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function hasLoneSurrogate(text: string): boolean {
  return !(text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * The value's raw JSON text, written whatever it holds: lone surrogates as U+FFFD, NaN, Infinity
 * and -Infinity as those tokens, big integers (bigint, lossless numbers) as their digits, values
 * with no JSON form (undefined in an array, functions, symbols) as `null`, a repeated (cyclic)
 * object as `"[cycle]"`. Collects why the value is not canonical JSON into `reasons`.
 */
function rawText(value: unknown, reasons: Set<NormalizeReason>, seen: Set<object>, depth: number): string {
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) {
        reasons.add('lone-surrogate');
        return JSON.stringify((value as string & { toWellFormed(): string }).toWellFormed());
      }
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) {
        reasons.add('non-finite-number');
        return String(value);
      }
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) reasons.add('unsafe-integer');
      return String(value);
    case 'bigint':
      reasons.add('unsafe-integer');
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      reasons.add('not-json');
      return 'null';
    default:
      break;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (isLosslessNumber(object)) {
    const digits = (object as { value: string }).value;
    const number = Number(digits);
    if (!Number.isFinite(number)) reasons.add('non-finite-number');
    else if (Number.isInteger(number) && !Number.isSafeInteger(number)) reasons.add('unsafe-integer');
    else if (!numberHeldExactly(digits)) reasons.add('inexact-number');
    // Held exactly, yet not a plain number: as before `/2`, committed as a marker all the same.
    else reasons.add('unsafe-integer');
    return digits;
  }
  if (seen.has(object) || depth > MAX_DEPTH) {
    reasons.add('not-json');
    return '"[cycle]"';
  }
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      const items: string[] = [];
      for (let index = 0; index < object.length; index++) {
        if (!(index in object)) reasons.add('not-json');
        items.push(rawText(object[index], reasons, seen, depth + 1));
      }
      return `[${items.join(',')}]`;
    }
    const withJson = object as { toJSON?: () => unknown };
    if (typeof withJson.toJSON === 'function') {
      reasons.add('not-json');
      return rawText(withJson.toJSON(), reasons, seen, depth + 1);
    }
    if (!isPlainObject(object)) reasons.add('not-json');
    const entries: string[] = [];
    for (const [key, item] of Object.entries(object)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      entries.push(`${rawText(key, reasons, seen, depth + 1)}:${rawText(item, reasons, seen, depth + 1)}`);
    }
    return `{${entries.join(',')}}`;
  } finally {
    seen.delete(object);
  }
}

/**
 * Applies `callgate-normalize/1` to a value about to be committed (a tool result, message content,
 * exchange parameters): a value that is canonical JSON within `maxBytes` is returned as it is;
 * anything else — a lone surrogate, NaN or Infinity, an integer beyond ±(2^53−1), a number kept
 * with digits a double does not hold exactly (`inexact-number`, under `callgate-normalize/2`,
 * see `numberHeldExactly`; its raw text is the digits as sent), a value that is
 * not plain JSON, JSON text over `maxBytes` — is replaced by a {@link NormalizedMarker} carrying
 * the byte length and SHA-256 of its raw JSON text (UTF-8). A value that is itself such a marker
 * (see {@link isNormalizedMarker}: made before the value got here) is committed as it is, with
 * the reasons it names. Never throws.
 */
export function recordable(value: unknown, maxBytes: number = MAX_RECORDED_BYTES): Recordable {
  // A marker made before the value reached the engine (a client that cannot send the value, see
  // `@callgate/client`): committed as it is, and the record says why, as for one made here.
  if (isNormalizedMarker(value)) return { value, reasons: [...value.reasons] };
  const reasons = new Set<NormalizeReason>();
  let text: string;
  try {
    text = rawText(value, reasons, new Set(), 0);
  } catch (error) {
    // A getter or toJSON that throws: the value is described by the error instead.
    reasons.add('not-json');
    text = JSON.stringify(`[unreadable: ${error instanceof Error ? error.message : String(error)}]`);
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) reasons.add('over-size');
  if (reasons.size === 0) return { value, reasons: [] };
  const sorted = [...reasons].sort();
  const marker: NormalizedMarker = {
    $callgate: 'normalized',
    rule: reasons.has('inexact-number') ? NORMALIZE_RULE_2 : NORMALIZE_RULE,
    reasons: sorted,
    bytes,
    sha256: sha256Digest(Buffer.from(text, 'utf8')),
  };
  return { value: marker, reasons: sorted };
}
