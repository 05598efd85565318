// @callgate/core: the public API. Anything exported here is public and pinned by index.test.ts;
// add names deliberately.

export type {
  Approval,
  ApprovalResponse,
  Bundle,
  Decision,
  ErrorBody,
  ErrorKind,
  Grant,
  LedgerRecord,
  Outcome,
  ToolCall,
  ToolSpec,
} from '@callgate/protocol';
export { CallgateError, isCallgateError } from '@callgate/protocol';
export type { ApprovalPort } from './approvals/port.js';
export { CallbackApprovalPort, QueueApprovalPort } from './approvals/port.js';
export type { Ed25519KeyPair } from './crypto.js';
export {
  constantTimeEqual,
  ed25519PublicKey,
  generateEd25519KeyPair,
  randomBytes,
  sha256,
  sha256Digest,
} from './crypto.js';
export type { ApprovalChannel, ApprovalEvent, ApprovalHandout } from './gate/approval-channel.js';
export type { ApprovalState } from './gate/approvals.js';
export type { CallVerdict, ModelMessage } from './gate/decide.js';
export type { DecideOptions, EngineOptions, RunStart } from './gate/engine.js';
export { Engine } from './gate/engine.js';
export type { ExecutableCall, ExecuteStepOptions, StepResult, ToolExecutor } from './gate/execute-step.js';
export { executeStep } from './gate/execute-step.js';
export type { GovernedCall, GovernedCallsOptions, Refusal, StartedCall } from './gate/governed-calls.js';
export {
  approvalRefusal,
  GovernedCalls,
  refusalOf,
  refusalText,
  runArguments,
  sameArguments,
} from './gate/governed-calls.js';
export type { Governor } from './gate/governor.js';
export { localGovernor } from './gate/governor.js';
export type { GrantBinding } from './gate/grants.js';
export { grantTokenHash } from './gate/grants.js';
export type { GuardrailOptions, GuardrailPattern } from './gate/guardrails.js';
export { SECRET_PATTERNS } from './gate/guardrails.js';
export { mintCallId, uuidv7 } from './gate/ids.js';
export type { Logger } from './gate/logger.js';
export { silentLogger } from './gate/logger.js';
export type { CallOutcomeReport } from './gate/outcomes.js';
export type { RegisteredTool } from './gate/registry.js';
export { ToolRegistry, validateArguments } from './gate/registry.js';
export type { ApprovalAnswerer } from './gate/reviewer.js';
export { localReviewer } from './gate/reviewer.js';
export type { StepOutcome } from './gate/step-outcomes.js';
export type { Commitment } from './json/canonical.js';
export { canonicalJson, commit, commitCanonical, digestOf, opens } from './json/canonical.js';
export type { NormalizedMarker, NormalizeReason, Recordable } from './json/normalize.js';
export { MAX_RECORDED_BYTES, NORMALIZE_RULE, recordable } from './json/normalize.js';
export type { JsonLimits } from './json/safe-json.js';
export {
  checkJsonValue,
  DEFAULT_JSON_LIMITS,
  parseJsonLossless,
  parseJsonStrict,
  readArguments,
} from './json/safe-json.js';
export { truncateText } from './json/text.js';
export {
  ARGUMENTS_SECRET_META_KEY,
  argumentsDigest,
  argumentsDigestOf,
  deriveRunKey,
  keyedArgumentsDigest,
} from './ledger/arguments-key.js';
export type { BundleText } from './ledger/bundle-text.js';
export { parseBundleText, serializeBundle } from './ledger/bundle-text.js';
export { KEY_ROTATIONS_META_KEY, policyMetaKey, putPolicyDocument } from './ledger/export.js';
export type { KeyPeriod, KeyRotation } from './ledger/key-rotation.js';
export { followKeyRotations, openKeyRotation, signKeyRotation } from './ledger/key-rotation.js';
export type { LedgerOptions } from './ledger/ledger.js';
export { Ledger } from './ledger/ledger.js';
export {
  CompactRange,
  leafHash,
  merkleRoot,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
} from './ledger/merkle.js';
export type { AppendObserver } from './ledger/observe.js';
export { recordCommitments, sealRecord } from './ledger/record.js';
export type { Checkpoint, LogSigner, Opened, VerifierKey } from './ledger/signed-note.js';
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
} from './ledger/signed-note.js';
export type { TimelineEntry } from './ledger/timeline.js';
export { timelineOf } from './ledger/timeline.js';
export type { VerifyCheck, VerifyFailure, VerifyOptions, VerifyReport } from './ledger/verify/report.js';
export { VERIFY_CHECKS } from './ledger/verify/report.js';
export { verifyBundle, verifyBundleText } from './ledger/verify/verify-bundle.js';
export type { Cosignature, WitnessKey, WitnessSigner } from './ledger/witness/cosignature.js';
export {
  addCosignatures,
  cosign,
  noteCosignatures,
  parseWitnessKey,
  witnessSignerFromPrivateKey,
} from './ledger/witness/cosignature.js';
export type {
  WitnessLogState,
  WitnessOptions,
  WitnessResponse,
  WitnessStateStore,
} from './ledger/witness/witness.js';
export { addCheckpointBody, MemoryWitnessState, Witness } from './ledger/witness/witness.js';
export type { WitnessEndpoint, WitnessGap, WitnessingOptions } from './ledger/witness/witnessing.js';
export { Witnessing } from './ledger/witness/witnessing.js';
export { formatDuration, parseDuration } from './policy/duration.js';
export type {
  AnnotationHint,
  ApprovalSettings,
  Policy,
  PolicyDocument,
  PolicyInput,
  PolicyLimits,
  PolicyRuleDocument,
  ReplayChange,
  ReplayedCall,
  ReplayOptions,
  ReplayReport,
  ReplayTool,
} from './policy/index.js';
export { compilePolicy, loadPolicy, replayPolicy } from './policy/index.js';
export { YamlLocator } from './policy/yaml-locator.js';
export { MemoryStore } from './store/memory-store.js';
export type { LogFrontier, LogPosition, LogSequencer, SequencedAppend } from './store/sequencer.js';
export type {
  ApiKeyRow,
  ApprovalQuery,
  ApprovalResolution,
  CallRow,
  CheckpointRow,
  RunHead,
  RunRow,
  Store,
  StoredRecord,
  StoreStatus,
  Synchronous,
} from './store/store.js';
