// RFC 8785 (JCS) canonical JSON, fast path for plain JSON data such as ledger records. It gives
// exactly the output of canonicalJson (json/canonical.ts) — a property test pins that — at a
// fraction of the cost: no per-character surrogate scan, no Set of visited objects, no sort when
// the keys already come sorted. Anything unusual (undefined in arrays, toJSON, bigint, NaN,
// lone surrogates, very deep nesting) is handed to canonicalJson, which decides.
import { canonicalJson } from '../json/canonical.js';

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
    out += `${first ? '' : ','}${serializeString(key)}:${serialize(item, depth + 1)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * RFC 8785 (JCS) canonical JSON of `value`: the same string as `canonicalJson(value)`, faster for
 * plain JSON data.
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
