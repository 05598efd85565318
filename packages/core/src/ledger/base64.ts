// Strict standard base64 (RFC 4648 §4, padded). Buffer.from(text, 'base64') accepts anything and
// ignores what it cannot read; a verifier must not, or two different strings would decode to the
// same bytes and a changed character could go unnoticed.

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// A 32-byte value is 43 characters and one '='; the last character carries 4 bits and 2 zero bits.
const BASE64_HASH = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** Standard padded base64 of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * Decodes canonical standard padded base64 (RFC 4648 §4). Returns undefined for anything else:
 * other alphabets, missing or extra padding, whitespace, or non-zero padding bits.
 */
export function decodeBase64(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** Decodes the canonical base64 of a 32-byte hash, or undefined when `text` is not one. */
export function decodeHash(text: string): Buffer | undefined {
  return BASE64_HASH.test(text) ? Buffer.from(text, 'base64') : undefined;
}
