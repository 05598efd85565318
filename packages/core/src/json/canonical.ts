import { CallgateError } from '@callgate/protocol';
import canonicalize from 'canonicalize';
import { randomBytes, sha256Digest } from '../crypto.js';

/**
 * RFC 8785 (JCS) canonical JSON of `value`.
 *
 * @throws CallgateError `tool-args-invalid` when the value has no JSON form (NaN, Infinity, a lone
 *   surrogate, a cycle, `undefined` at the top, a bigint).
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    throw new CallgateError(
      'tool-args-invalid',
      `value has no canonical JSON form: ${(error as Error).message}`,
    );
  }
  if (text === undefined) throw new CallgateError('tool-args-invalid', 'value has no canonical JSON form');
  return text;
}

// The fast path: exactly the output of canonicalJson — a property test pins that — at a fraction
// of the cost for plain JSON data (records, arguments): no per-character surrogate scan, no Set of
// visited objects, no sort when the keys already come sorted. Anything unusual (undefined in
// arrays, toJSON, bigint, NaN, lone surrogates, very deep nesting) is handed to canonicalJson,
// which decides.

// Strings without these characters are written as they are, in quotes; the rest go through
// JSON.stringify (escapes) or canonicalJson (surrogates, refused when alone).
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters JSON escapes.
const NEEDS_CARE = /[\u0000-\u001f"\\\uD800-\uDFFF]/;
const ANY_SURROGATE = /[\uD800-\uDFFF]/;
const MAX_DEPTH = 200;

/** Thrown inside the fast path to hand the whole value to canonicalJson. */
const FALLBACK = Symbol('fallback');

function serializeString(text: string): string {
  if (!NEEDS_CARE.test(text)) return `"${text}"`;
  // JSON.stringify escapes exactly as RFC 8785 §3.2.2.2 requires; lone surrogates are refused by
  // canonicalJson, so any surrogate at all takes the careful path.
  if (ANY_SURROGATE.test(text)) throw FALLBACK;
  return JSON.stringify(text);
}

/**
 * Serialized object keys with their colon, remembered: records and arguments repeat the same few
 * keys, and a lookup is cheaper than scanning and quoting the key again. Bounded: past the limit,
 * keys are serialized each time.
 */
const keyTexts = new Map<string, string>();
const MAX_KEY_TEXTS = 4096;

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = `${serializeString(key)}:`;
    if (keyTexts.size < MAX_KEY_TEXTS && key.length <= 64) keyTexts.set(key, text);
  }
  return text;
}

function serialize(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return serializeString(value);
    case 'number':
      // Number::toString is the RFC 8785 §3.2.2.3 number form for every finite number.
      if (!Number.isFinite(value)) throw FALLBACK;
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw FALLBACK;
  }
  if (value === null) return 'null';
  if (depth > MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') throw FALLBACK;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined) throw FALLBACK;
      out += i === 0 ? serialize(item, depth + 1) : `,${serialize(item, depth + 1)}`;
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) {
      // Default sort order is UTF-16 code unit order, as RFC 8785 §3.2.3 requires.
      keys.sort();
      break;
    }
  }
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined || typeof item === 'symbol') continue;
    out += `${first ? '' : ','}${keyText(key)}${serialize(item, depth + 1)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * RFC 8785 (JCS) canonical JSON of `value`: the same string as `canonicalJson(value)`, faster for
 * plain JSON data. What the hot paths (arguments digests, commitments, ledger records) use.
 * @throws CallgateError `tool-args-invalid` when the value has no JSON form (as canonicalJson).
 */
export function fastCanonicalJson(value: unknown): string {
  try {
    return serialize(value, 0);
  } catch (error) {
    if (error === FALLBACK) return canonicalJson(value);
    throw error;
  }
}

/** `sha256:<hex>` of the RFC 8785 canonical JSON of `value`: equal values give equal digests. */
export function digestOf(value: unknown): string {
  return sha256Digest(fastCanonicalJson(value));
}

/** A commitment and the salt that opens it. */
export interface Commitment {
  /** `sha256:<hex>` of salt ‖ JCS(value). */
  commitment: string;
  /** 16 random bytes, base64url. */
  salt: string;
}

/**
 * A salted commitment to `value`: `sha256:` of the 16 salt bytes followed by the value's RFC
 * 8785 canonical JSON. Without the salt a commitment reveals nothing about a guessable value.
 */
export function commit(value: unknown, salt: Uint8Array = randomBytes(16)): Commitment {
  return commitCanonical(fastCanonicalJson(value), salt);
}

/** {@link commit} for a value whose RFC 8785 canonical JSON text is already at hand. */
export function commitCanonical(canonical: string, salt: Uint8Array = randomBytes(16)): Commitment {
  return { commitment: sha256Digest(salt, canonical), salt: Buffer.from(salt).toString('base64url') };
}

/** True when `salt` (base64url) and `value` open `commitment`. */
export function opens(commitment: string, salt: string, value: unknown): boolean {
  try {
    return sha256Digest(Buffer.from(salt, 'base64url'), fastCanonicalJson(value)) === commitment;
  } catch {
    return false;
  }
}
