// @callgate/core/crypto: hashes, keys and commitments (RFC 8785 canonical JSON, SHA-256, Ed25519).
// Anything exported here is public and pinned by crypto.test.ts; add names deliberately.

export type { Ed25519KeyPair } from '../crypto.js';
export {
  constantTimeEqual,
  ed25519PublicKey,
  generateEd25519KeyPair,
  randomBytes,
  sha256,
} from '../crypto.js';
export type { Commitment } from '../json/canonical.js';
export { canonicalJson, commit, digestOf, opens } from '../json/canonical.js';
