import { MemoryStore } from '@callgate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { API_KEY_PATTERN, apiKeyHash, createApiKey, findApiKey, revokeApiKey } from './keys.js';

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

  it('revokes any live key but the last live admin key, whatever the mix of keys', async () => {
    // Any set of keys (some already revoked), then revocations in any order: the store keeps at
    // least one live admin key whenever it had one, and each refusal says why.
    const roles = fc.constantFrom('admin' as const, 'reviewer' as const, 'agent' as const);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ role: roles, revoked: fc.boolean() }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat({ max: 7 }), { maxLength: 10 }),
        async (keys, order) => {
          const store = new MemoryStore();
          for (const [index, key] of keys.entries()) {
            await createApiKey(store, { role: key.role, name: `k${index}`, now: 1 });
            if (key.revoked) await store.revokeApiKey(`k${index}`, 2);
          }
          const liveAdmins = async () =>
            (await store.listApiKeys()).filter((row) => row.role === 'admin' && row.revoked_at === undefined)
              .length;
          const hadAdmin = (await liveAdmins()) > 0;
          for (const index of order) {
            const name = `k${index}`;
            const rows = await store.listApiKeys();
            const live = rows.filter((row) => row.revoked_at === undefined);
            const target = live.find((row) => row.name === name);
            const attempt = revokeApiKey(store, name, 3);
            if (!target) await expect(attempt).rejects.toMatchObject({ kind: 'not-found' });
            else if (target.role === 'admin' && live.filter((row) => row.role === 'admin').length === 1)
              await expect(attempt).rejects.toMatchObject({
                kind: 'conflict',
                message: expect.stringMatching(/last admin key/),
              });
            else await attempt;
          }
          expect((await liveAdmins()) > 0).toBe(hadAdmin);
        },
      ),
    );
  });
});
