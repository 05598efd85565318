import { describe, expect, it } from 'vitest';
import * as api from './crypto.js';

describe('@callgate/core/crypto public API', () => {
  it('exports exactly the pinned names (a change here is a change of public API)', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "canonicalJson",
        "commit",
        "constantTimeEqual",
        "digestOf",
        "ed25519PublicKey",
        "generateEd25519KeyPair",
        "opens",
        "randomBytes",
        "sha256",
      ]
    `);
  });
});
