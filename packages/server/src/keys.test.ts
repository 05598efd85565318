import { MemoryStore } from '@callgate/core';
import { describe, expect, it } from 'vitest';
import { API_KEY_PATTERN, apiKeyHash, createApiKey, findApiKey } from './keys.js';

describe('API keys', () => {
  it('creates cg_ keys, stores only their hash and finds live ones', async () => {
    const store = new MemoryStore();
    const { key, row } = await createApiKey(store, { role: 'reviewer', name: 'bob', now: 5 });
    expect(key).toMatch(API_KEY_PATTERN);
    expect(row).toEqual({ key_hash: apiKeyHash(key), name: 'bob', role: 'reviewer', created_at: 5 });
    expect(JSON.stringify(await store.listApiKeys())).not.toContain(key);
    expect(await findApiKey(store, key)).toMatchObject({ name: 'bob' });
    expect(await findApiKey(store, `${key.slice(0, -1)}x`)).toBeUndefined();
    await store.revokeApiKey('bob', 6);
    expect(await findApiKey(store, key)).toBeUndefined();
  });

  it('names keys by role by default and refuses a taken or malformed name', async () => {
    const store = new MemoryStore();
    const { row } = await createApiKey(store, { role: 'agent' });
    expect(row.name).toMatch(/^agent-[0-9a-f]{8}$/);
    await createApiKey(store, { role: 'admin', name: 'root' });
    await expect(createApiKey(store, { role: 'admin', name: 'root' })).rejects.toMatchObject({
      kind: 'conflict',
    });
    await expect(createApiKey(store, { role: 'admin', name: 'has space' })).rejects.toMatchObject({
      kind: 'request-invalid',
    });
  });
});
