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

/** `sha256:<hex>` of the RFC 8785 canonical JSON of `value`: equal values give equal digests. */
export function digestOf(value: unknown): string {
  return sha256Digest(canonicalJson(value));
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
  return commitCanonical(canonicalJson(value), salt);
}

/** {@link commit} for a value whose RFC 8785 canonical JSON text is already at hand. */
export function commitCanonical(canonical: string, salt: Uint8Array = randomBytes(16)): Commitment {
  return { commitment: sha256Digest(salt, canonical), salt: Buffer.from(salt).toString('base64url') };
}

/** True when `salt` (base64url) and `value` open `commitment`. */
export function opens(commitment: string, salt: string, value: unknown): boolean {
  try {
    return sha256Digest(Buffer.from(salt, 'base64url'), canonicalJson(value)) === commitment;
  } catch {
    return false;
  }
}
