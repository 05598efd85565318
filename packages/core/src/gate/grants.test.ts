import { CallgateError } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory-store.js';
import type { Store } from '../store/store.js';
import { consumeGrant, grantTokenHash, issueConsumedGrants, issueGrant } from './grants.js';

const binding = {
  run_id: 'run-1',
  call_id: 'call-1',
  tool: 'send_invoice',
  arguments_digest: `sha256:${'a'.repeat(64)}`,
};

describe('grants', () => {
  it('are 256-bit random tokens stored only as hashes', async () => {
    const store = new MemoryStore();
    const grant = await issueGrant(store, binding, 60_000, 1_000);
    expect(grant.token).toMatch(/^cgt_[A-Za-z0-9_-]{43}$/);
    expect(grant.expires_at).toBe(61_000);
    const [stored] = await store.findGrants({
      tool: binding.tool,
      arguments_digest: binding.arguments_digest,
      now: 1_000,
    });
    expect(stored?.token_hash).toBe(grantTokenHash(grant.token));
    expect(JSON.stringify(stored)).not.toContain(grant.token.slice(4));
  });

  it('open their call exactly once', async () => {
    const store = new MemoryStore();
    const grant = await issueGrant(store, binding, 60_000, 0);
    await expect(consumeGrant(store, grant.token, binding, 10)).resolves.toMatchObject(binding);
    await expect(consumeGrant(store, grant.token, binding, 11)).rejects.toMatchObject({
      kind: 'grant-invalid',
    });
  });

  it('of 100 concurrent consumes of one grant exactly one succeeds', async () => {
    const store = new MemoryStore();
    const grant = await issueGrant(store, binding, 60_000, 0);
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, () => consumeGrant(store, grant.token, binding, 5)),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect((result.reason as CallgateError).kind).toBe('grant-invalid');
    }
  });

  it('expire after their lifetime', async () => {
    const store = new MemoryStore();
    const grant = await issueGrant(store, binding, 60_000, 0);
    await expect(consumeGrant(store, grant.token, binding, 60_000)).rejects.toMatchObject({
      kind: 'grant-invalid',
      message: expect.stringMatching(/expired/),
    });
  });

  it('never open a call with a different tool, call id, run or arguments', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('run_id', 'call_id', 'tool', 'arguments_digest'),
        fc.string({ minLength: 1 }),
        async (field, other) => {
          fc.pre(other !== binding[field]);
          const store = new MemoryStore();
          const grant = await issueGrant(store, binding, 60_000, 0);
          const error = await consumeGrant(store, grant.token, { ...binding, [field]: other }, 1).catch(
            (e) => e,
          );
          expect(error).toBeInstanceOf(CallgateError);
          expect(error.kind).toBe('grant-invalid');
          // The mismatched attempt spent the grant: the right call cannot use it afterwards either.
          await expect(consumeGrant(store, grant.token, binding, 2)).rejects.toMatchObject({
            kind: 'grant-invalid',
          });
        },
      ),
      { numRuns: 50 },
    );
  });

  it('issued already spent leave what a put and a consume leave, with or without putSpentGrant', async () => {
    // The store without putSpentGrant takes the two writes; the one with it, one write each.
    const twoWrites = (store: MemoryStore): Store =>
      new Proxy(store, {
        get: (target, name) =>
          name === 'putSpentGrant' ? undefined : Reflect.get(target, name, target)?.bind?.(target),
      });
    const name = fc.string({ minLength: 1, maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.record({ run_id: name, call_id: name, tool: name }), {
          minLength: 1,
          maxLength: 4,
          selector: (value) => JSON.stringify(value),
        }),
        fc.integer({ min: -5, max: 120_000 }),
        fc.integer({ min: 0, max: 2_000_000_000_000 }),
        async (calls, ttlMs, now) => {
          const bindings = calls.map((call) => ({ ...call, arguments_digest: binding.arguments_digest }));
          const settled = async (store: Store) => {
            const issued = await issueConsumedGrants(store, bindings, ttlMs, now).then(
              (grants) => ({ grants }),
              (error: CallgateError) => ({ error: error.kind }),
            );
            const state = [];
            for (const bound of bindings)
              state.push({
                consumed: await store.grantConsumed(bound),
                open: await store.findGrants({
                  tool: bound.tool,
                  arguments_digest: bound.arguments_digest,
                  now,
                }),
              });
            return { issued, state };
          };
          const one = await settled(new MemoryStore());
          const two = await settled(twoWrites(new MemoryStore()));
          expect('grants' in one.issued).toBe('grants' in two.issued);
          expect(one.state).toStrictEqual(two.state);
          if ('grants' in one.issued && 'grants' in two.issued) {
            const shape = (grants: { token: string }[]) => grants.map(({ token: _, ...rest }) => rest);
            expect(shape(one.issued.grants)).toStrictEqual(shape(two.issued.grants));
          } else expect(one.issued).toStrictEqual(two.issued);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('refuse an unknown or empty token', async () => {
    const store = new MemoryStore();
    await expect(consumeGrant(store, 'cgt_nope', binding, 0)).rejects.toMatchObject({
      kind: 'grant-invalid',
    });
    await expect(consumeGrant(store, '', binding, 0)).rejects.toMatchObject({ kind: 'grant-invalid' });
  });
});
