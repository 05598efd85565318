import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveRunKey, keyedArgumentsDigest, RunKeys } from './arguments-key.js';

describe('RunKeys.keyBody', () => {
  it('keys every arguments digest as keyedArgumentsDigest under the run’s derived key does, run after run', () => {
    const hex = fc
      .uint8Array({ minLength: 32, maxLength: 32 })
      .map((bytes) => Buffer.from(bytes).toString('hex'));
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(fc.tuple(fc.constantFrom('run-a', 'run-b', 'run-c'), hex), { minLength: 1, maxLength: 8 }),
        (secret, items) => {
          const keys = new RunKeys(secret);
          for (const [runId, digestHex] of items) {
            const digest = `sha256:${digestHex}`;
            const body = keys.keyBody(runId, { tool: 'echo', arguments_digest: digest });
            expect(body.arguments_digest).toBe(keyedArgumentsDigest(deriveRunKey(secret, runId), digest));
          }
        },
      ),
    );
  });
});
