// RFC 8785 canonical JSON of parsed JSON data by the engine's own JSON.stringify: for plain data
// (objects with Object.prototype or null as prototype, their keys already in UTF-16 code unit
// order; arrays without holes; strings without lone surrogates; finite numbers; booleans; null),
// JSON.stringify writes exactly the RFC 8785 form (RFC 8785 §3.2.2 takes ECMAScript's number and
// string serialization), natively. Anything else is left to the canonical serializer. What the
// verifier uses for records read from a bundle, whose keys are in canonical order already.
import { fastCanonicalJson } from '../json/canonical.js';

/** True when `value` is plain JSON data whose object keys are already in RFC 8785 order. */
function plainAndSorted(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          if (!(index in value) || !plainAndSorted(value[index])) return false;
        }
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      let previous: string | undefined;
      for (const key in value) {
        if (previous !== undefined && !(previous < key)) return false;
        previous = key;
        if (!plainAndSorted((value as Record<string, unknown>)[key])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * The RFC 8785 canonical JSON of `value`: `JSON.stringify(value)` when `value` is plain data with
 * its keys in order and no escaped surrogate (a lone one has no canonical form), else
 * `fastCanonicalJson(value)`, which decides (and throws for values with no canonical form).
 * @throws CallgateError `tool-args-invalid` when the value has no canonical JSON form.
 */
export function canonicalOfParsed(value: unknown): string {
  if (plainAndSorted(value)) {
    const text = JSON.stringify(value);
    if (text.indexOf('\\ud') < 0) return text;
  }
  return fastCanonicalJson(value);
}
