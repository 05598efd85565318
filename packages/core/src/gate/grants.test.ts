import { CallgateError } from '@callgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory-store.js';
import { consumeGrant, grantTokenHash, issueGrant } from './grants.js';

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

  it('refuse an unknown or empty token', async () => {
    const store = new MemoryStore();
    await expect(consumeGrant(store, 'cgt_nope', binding, 0)).rejects.toMatchObject({
      kind: 'grant-invalid',
    });
    await expect(consumeGrant(store, '', binding, 0)).rejects.toMatchObject({ kind: 'grant-invalid' });
  });
});
