import type { ApiKeyRow, Store } from '@callgate/core';
import { constantTimeEqual, randomBytes, sha256 } from '@callgate/core/crypto';
import { API_KEY_PATTERN, CallgateError } from '@callgate/protocol';
import { type ApiKeyRole, keyName } from './http/schemas.js';

/** The shape of an API key (`cg_` and 43 base64url characters): protocol's, re-exported. */
export { API_KEY_PATTERN };

/** The hash under which a key is stored: hex SHA-256 of the key's text. */
export function apiKeyHash(key: string): string {
  return sha256(key).toString('hex');
}

/** A key just created: `key` is shown once and never stored. */
export interface CreatedApiKey {
  key: string;
  row: ApiKeyRow;
}

/**
 * Creates an API key and stores its SHA-256 (never the key).
 *
 * @param options.role what the key may do.
 * @param options.name a unique name (letters, digits, `_ . @ -`, at most 64); default
 *   `<role>-<8 hex>`. The name is what runs (principal) and approvals (reviewer) record.
 * @param options.now epoch ms of creation; default `Date.now()`.
 * @returns the key's text (to print once) and its stored row.
 * @throws CallgateError `request-invalid` for a malformed name, `conflict` when a live key has
 *   that name.
 */
export async function createApiKey(
  store: Store,
  options: { role: ApiKeyRole; name?: string; now?: number },
): Promise<CreatedApiKey> {
  const name = options.name ?? `${options.role}-${randomBytes(4).toString('hex')}`;
  const checked = keyName.safeParse(name);
  if (!checked.success) {
    throw new CallgateError(
      'request-invalid',
      `key name ${JSON.stringify(name)}: ${checked.error.issues[0]?.message}`,
    );
  }
  const existing = await store.listApiKeys();
  if (existing.some((row) => row.name === name && row.revoked_at === undefined)) {
    throw new CallgateError(
      'conflict',
      `an API key named ${name} exists; revoke it first or choose another name`,
    );
  }
  const key = `cg_${randomBytes(32).toString('base64url')}`;
  const row: ApiKeyRow = {
    key_hash: apiKeyHash(key),
    name,
    role: options.role,
    created_at: options.now ?? Date.now(),
  };
  try {
    await store.putApiKey(row);
  } catch (error) {
    throw new CallgateError('conflict', `an API key named ${name} exists`, {}, { cause: error });
  }
  return { key, row };
}

/**
 * Revokes the live key `name`, unless it is the last live admin key: that would leave no one able
 * to manage keys through the API. The one rule `DELETE /v1/keys/{name}` and `callgate keys revoke`
 * both follow.
 *
 * @param name the key's name.
 * @param now epoch ms of the revocation.
 * @throws CallgateError `not-found` when no live key has that name, `conflict` when it is the
 *   last live admin key.
 */
export async function revokeApiKey(store: Store, name: string, now: number): Promise<void> {
  const live = (await store.listApiKeys()).filter((row) => row.revoked_at === undefined);
  const target = live.find((row) => row.name === name);
  if (!target) throw new CallgateError('not-found', `no live API key named ${name}`);
  if (target.role === 'admin' && live.filter((row) => row.role === 'admin').length <= 1) {
    throw new CallgateError(
      'conflict',
      'the last admin key cannot be revoked; create another admin key first',
    );
  }
  if (!(await store.revokeApiKey(name, now)))
    throw new CallgateError('not-found', `no live API key named ${name}`);
}

/**
 * The live key whose text is `key`, or undefined. The key is hashed and looked up by hash; the
 * stored hash is then compared in constant time, so timing reveals nothing about the key.
 */
export async function findApiKey(store: Store, key: string): Promise<ApiKeyRow | undefined> {
  if (!API_KEY_PATTERN.test(key)) return undefined;
  const hash = apiKeyHash(key);
  const row = await store.getApiKey(hash);
  if (!row || row.revoked_at !== undefined) return undefined;
  return constantTimeEqual(row.key_hash, hash) ? row : undefined;
}
