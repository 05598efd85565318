import { CallgateError, type Grant, type StoredGrant } from '@callgate/protocol';
import { randomBytes, sha256 } from '../crypto.js';
import type { Store } from '../store/store.js';

/** What a grant is bound to. */
export interface GrantBinding {
  run_id: string;
  call_id: string;
  tool: string;
  arguments_digest: string;
}

/** The hash under which a grant token is stored: hex SHA-256 of the token text. */
export function grantTokenHash(token: string): string {
  return sha256(token).toString('hex');
}

/**
 * Issues a one-use grant bound to `binding`, valid for `ttlMs` milliseconds from `now`.
 * The token (256 random bits, base64url) is returned once; the store keeps only its hash.
 */
export async function issueGrant(
  store: Store,
  binding: GrantBinding,
  ttlMs: number,
  now: number,
): Promise<Grant> {
  const token = `cgt_${randomBytes(32).toString('base64url')}`;
  const grant: Grant = { v: 1, token, ...binding, expires_at: now + ttlMs };
  const stored: StoredGrant = {
    v: 1,
    token_hash: grantTokenHash(token),
    ...binding,
    expires_at: grant.expires_at,
  };
  await store.putGrant(stored);
  return grant;
}

/**
 * Consumes a grant for the call described by `expected`, atomically and at most once. A token
 * presented with any other run, call, tool or arguments digest is consumed (it can never be
 * used again) and refused.
 *
 * @returns the consumed grant.
 * @throws CallgateError `grant-invalid` when the token is unknown, already used, expired, or
 *   bound to another run, call, tool or arguments.
 */
export async function consumeGrant(
  store: Store,
  token: string,
  expected: GrantBinding,
  now: number,
): Promise<StoredGrant> {
  if (typeof token !== 'string' || token.length === 0) {
    throw new CallgateError('grant-invalid', 'no grant token was presented', { call_id: expected.call_id });
  }
  const grant = await store.consumeGrant(grantTokenHash(token), now);
  if (!grant) {
    throw new CallgateError('grant-invalid', 'the grant is unknown, already used or expired', {
      call_id: expected.call_id,
    });
  }
  const mismatched = (['run_id', 'call_id', 'tool', 'arguments_digest'] as const).filter(
    (field) => grant[field] !== expected[field],
  );
  if (mismatched.length > 0) {
    throw new CallgateError(
      'grant-invalid',
      `the grant was issued for another ${mismatched.map((field) => field.replace('_', ' ')).join(', ')}; it is now spent`,
      { call_id: expected.call_id },
    );
  }
  return grant;
}
