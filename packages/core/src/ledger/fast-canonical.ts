// The ledger's canonical JSON (RFC 8785) is the fast path of json/canonical.ts, which now serves
// every hot path (arguments digests and commitments too). Kept here for the ledger's imports.
export { fastCanonicalJson } from '../json/canonical.js';
