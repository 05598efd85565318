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
 * Mints a one-use grant bound to `binding`, valid for `ttlMs` milliseconds from `now`: the grant
 * (its token, 256 random bits, base64url, is returned once) and the row the store keeps (only
 * the token's hash). Nothing is stored.
 */
export function mintGrant(
  binding: GrantBinding,
  ttlMs: number,
  now: number,
): { grant: Grant; stored: StoredGrant } {
  const token = `cgt_${randomBytes(32).toString('base64url')}`;
  const grant: Grant = { v: 1, token, ...binding, expires_at: now + ttlMs };
  const stored: StoredGrant = {
    v: 1,
    token_hash: grantTokenHash(token),
    ...binding,
    expires_at: grant.expires_at,
  };
  return { grant, stored };
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
  const { grant, stored } = mintGrant(binding, ttlMs, now);
  await store.putGrant(stored);
  return grant;
}

/**
 * Issues a grant for each binding and consumes it at once, for a caller that runs the calls
 * itself right after the decision: the grant exists only as spent (it can never be honoured for
 * another call, e.g. by the gateway). A store with `putSpentGrant` (SQLite, memory) stores each
 * grant spent in one write; otherwise both writes of every grant are queued in the same turn, so
 * a store that commits per turn commits them in one transaction.
 *
 * @returns the grants, in order (their tokens are already spent).
 * @throws CallgateError `grant-invalid` when the store did not consume a grant it just stored.
 */
export async function issueConsumedGrants(
  store: Store,
  bindings: readonly GrantBinding[],
  ttlMs: number,
  now: number,
): Promise<Grant[]> {
  const minted = bindings.map((binding) => mintGrant(binding, ttlMs, now));
  if (store.putSpentGrant && ttlMs > 0) {
    // One write per grant instead of two, leaving the same row (a grant with expires_at > now
    // is always consumable at once; ttlMs <= 0 takes the path below, which refuses it).
    const putSpent = store.putSpentGrant.bind(store);
    await Promise.all(minted.map(({ stored }) => putSpent(stored, now)));
    return minted.map(({ grant }) => grant);
  }
  const writes: Promise<unknown>[] = [];
  const consumed: Promise<StoredGrant | undefined>[] = [];
  for (const { stored } of minted) {
    writes.push(store.putGrant(stored));
    consumed.push(store.consumeGrant(stored.token_hash, now));
  }
  await Promise.all(writes);
  const spent = await Promise.all(consumed);
  spent.forEach((grant, index) => {
    if (!grant)
      throw new CallgateError('grant-invalid', 'the grant issued for the call could not be consumed', {
        call_id: bindings[index]?.call_id ?? '',
      });
  });
  return minted.map(({ grant }) => grant);
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
