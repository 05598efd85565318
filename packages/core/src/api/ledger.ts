// @callgate/core/ledger: the tamper-evident ledger and its offline verification. Records chained
// per run, the RFC 9162 Merkle tree and its proofs, C2SP signed checkpoints and witness
// cosignatures, key rotation, bundles and `verifyBundle`. Anything exported here is public and
// pinned by ledger.test.ts; add names deliberately.

export {
  ARGUMENTS_SECRET_META_KEY,
  argumentsDigest,
  argumentsDigestOf,
  deriveRunKey,
  keyedArgumentsDigest,
} from '../ledger/arguments-key.js';
export type { BundleText } from '../ledger/bundle-text.js';
export { parseBundleText, serializeBundle } from '../ledger/bundle-text.js';
export { KEY_ROTATIONS_META_KEY, putPolicyDocument } from '../ledger/export.js';
export type { KeyPeriod, KeyRotation } from '../ledger/key-rotation.js';
export { followKeyRotations, openKeyRotation, signKeyRotation } from '../ledger/key-rotation.js';
export type { LedgerOptions } from '../ledger/ledger.js';
export { Ledger } from '../ledger/ledger.js';
export {
  CompactRange,
  leafHash,
  merkleRoot,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
} from '../ledger/merkle.js';
export type { AppendObserver } from '../ledger/observe.js';
export { sealRecord } from '../ledger/record.js';
export type { Checkpoint, LogSigner, Opened, VerifierKey } from '../ledger/signed-note.js';
export {
  encodeSignerKey,
  encodeVerifierKey,
  formatCheckpoint,
  generateLogSigner,
  logSignerFromPrivateKey,
  openCheckpoint,
  parseCheckpoint,
  parseSignerKey,
  parseVerifierKey,
  signCheckpoint,
} from '../ledger/signed-note.js';
export type { BundleKeys } from '../ledger/signing-keys.js';
export { bundleKeys, keyToPin } from '../ledger/signing-keys.js';
export type { TimelineEntry } from '../ledger/timeline.js';
export { timelineOf } from '../ledger/timeline.js';
export type { BundleBytesVerdict } from '../ledger/verify/bundle-input.js';
export { MAX_BUNDLE_BYTES, TOO_LARGE_REFUSAL, verifyBundleBytes } from '../ledger/verify/bundle-input.js';
export type { VerifyCheck, VerifyFailure, VerifyOptions, VerifyReport } from '../ledger/verify/report.js';
export { VERIFY_CHECKS } from '../ledger/verify/report.js';
export { verifyBundle, verifyBundleText } from '../ledger/verify/verify-bundle.js';
export type { Cosignature, WitnessKey, WitnessSigner } from '../ledger/witness/cosignature.js';
export {
  addCosignatures,
  cosign,
  noteCosignatures,
  parseWitnessKey,
  repeatedWitness,
  witnessSignerFromPrivateKey,
} from '../ledger/witness/cosignature.js';
export type {
  WitnessLogState,
  WitnessOptions,
  WitnessResponse,
  WitnessStateStore,
} from '../ledger/witness/witness.js';
export { addCheckpointBody, MemoryWitnessState, Witness } from '../ledger/witness/witness.js';
export type { WitnessEndpoint, WitnessGap, WitnessingOptions } from '../ledger/witness/witnessing.js';
export { Witnessing } from '../ledger/witness/witnessing.js';
