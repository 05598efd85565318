import type { ApiKeyRow } from '@callgate/core';
import { expect, it } from 'vitest';
import { digestOf } from './fixtures.js';
import type { CurrentStore } from './store-contract.js';

function apiKey(name: string, overrides: Partial<ApiKeyRow> = {}): ApiKeyRow {
  return {
    key_hash: digestOf(`secret of ${name} ${Math.random()}`).slice('sha256:'.length),
    name,
    role: 'agent',
    created_at: 1_700_000_000_000,
    ...overrides,
  };
}

export function apiKeysContract(store: CurrentStore): void {
  it('stores keys by hash and lists them oldest first, revoked ones included', async () => {
    const reviewer = apiKey('ana', { role: 'reviewer', created_at: 3000 });
    const agent = apiKey('haystack-agent', { created_at: 1000 });
    const admin = apiKey('ops', { role: 'admin', created_at: 2000 });
    for (const key of [reviewer, agent, admin]) await store().putApiKey(key);
    expect(await store().getApiKey(reviewer.key_hash)).toStrictEqual(reviewer);
    expect(await store().getApiKey(digestOf('unknown'))).toBeUndefined();
    expect(await store().revokeApiKey('ops', 4000)).toBe(true);
    expect(await store().listApiKeys()).toStrictEqual([agent, { ...admin, revoked_at: 4000 }, reviewer]);
  });

  it('refuses a second live key with the same name, and allows the name again once revoked', async () => {
    const first = apiKey('ci');
    await store().putApiKey(first);
    await expect(store().putApiKey(apiKey('ci', { role: 'admin' }))).rejects.toThrow();
    expect(await store().listApiKeys()).toStrictEqual([first]);

    expect(await store().revokeApiKey('ci', 5000)).toBe(true);
    expect(await store().revokeApiKey('ci', 6000)).toBe(false);
    expect(await store().getApiKey(first.key_hash)).toStrictEqual({ ...first, revoked_at: 5000 });

    const second = apiKey('ci', { created_at: 7000 });
    await store().putApiKey(second);
    expect(await store().getApiKey(second.key_hash)).toStrictEqual(second);
    expect(await store().revokeApiKey('ci', 8000)).toBe(true);
    expect(await store().getApiKey(first.key_hash)).toStrictEqual({ ...first, revoked_at: 5000 });
  });

  it('does not revoke an unknown key', async () => {
    expect(await store().revokeApiKey('nobody', 1)).toBe(false);
    expect(await store().listApiKeys()).toEqual([]);
  });
}
