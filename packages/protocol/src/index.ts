// @callgate/protocol: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { Approval, ApprovalResponse, ApprovalStatus, Grant, StoredGrant } from './approval.js';
export {
  APPROVAL_STATUSES,
  approvalResponseSchema,
  approvalSchema,
  approvalStatusSchema,
  grantSchema,
} from './approval.js';
export type { Decision, Effect, IdentifiedCall, Outcome, ToolCall } from './call.js';
export {
  decisionSchema,
  EFFECTS,
  effectSchema,
  identifiedCallSchema,
  OUTCOMES,
  outcomeSchema,
  toolCallSchema,
} from './call.js';
export type { ErrorBody, ErrorDetails, ErrorKind } from './errors.js';
export {
  CallgateError,
  ERROR_KINDS,
  errorBody,
  errorBodySchema,
  errorKindSchema,
  isCallgateError,
} from './errors.js';
export type { ValidationProblem } from './field-path.js';
export { formatPath, problemOf } from './field-path.js';
export type {
  ApiKeyRole,
  CallRequest,
  ConsumeGrantRequest,
  CreateKeyRequest,
  DecideRequest,
  EndRunRequest,
  GapRequest,
  MessageRequest,
  OutcomeRequest,
  ReloadPolicyRequest,
  RunStartRequest,
} from './http-requests.js';
export {
  API_KEY_PATTERN,
  API_KEY_ROLES,
  apiKeyNameSchema,
  approveBody,
  bundleQuery,
  callBody,
  consumeGrantBody,
  createKeyBody,
  decisionsBody,
  denyBody,
  endRunBody,
  gapBody,
  getApprovalQuery,
  listApprovalsQuery,
  listRunsQuery,
  messageBody,
  outcomeBody,
  outcomesBody,
  outcomesList,
  queryFlag,
  reloadPolicyBody,
  startRunBody,
  verifyQuery,
  withdrawBody,
} from './http-requests.js';
export type {
  ApiKeyInfo,
  ApprovalAnswer,
  ApprovalStateAnswer,
  CallSummary,
  ConsumedGrant,
  DecideResult,
  Health,
  NewApiKey,
  OutcomeResult,
  PolicyReloadAnswer,
  Readiness,
  Run,
  Verdict,
  VerifyReport,
} from './http-responses.js';
export {
  apiKeyListSchema,
  apiKeySchema,
  approvalAnswerSchema,
  approvalStateSchema,
  callRowSchema,
  consumedGrantSchema,
  createdApiKeySchema,
  decideResultSchema,
  endedRunSchema,
  healthSchema,
  outcomeResultSchema,
  policyReloadSchema,
  policyStateSchema,
  readySchema,
  revokedApiKeySchema,
  runDetailSchema,
  runSchema,
  verdictSchema,
  verifyReportSchema,
} from './http-responses.js';
export { protocolJsonSchemas } from './json-schemas.js';
export type {
  AnyBundle,
  BatchInclusion,
  Bundle,
  BundleV2,
  ConsistencyProof,
  InclusionProof,
  LedgerRecord,
  LedgerRecordOf,
  LedgerRecordV1,
  Opening,
  RecordBody,
  RecordType,
} from './ledger.js';
export {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V2,
  batchInclusionSchema,
  bundleSchema,
  bundleV2Schema,
  consistencyProofSchema,
  digestSchema,
  inclusionProofSchema,
  ledgerRecordSchema,
  normalizeReasonSchema,
  openingSchema,
  RECORD_TYPES,
  REFUSAL_KINDS,
  recordBodySchema,
  recordTypeSchema,
} from './ledger.js';
export type { BundleV3, LedgerRecordV2, RunKey } from './ledger-v2.js';
export {
  BUNDLE_FORMAT_V3,
  bundleV3Schema,
  isKeyedDigestField,
  keyedDigestSchema,
  ledgerRecordV2Schema,
  runKeySchema,
} from './ledger-v2.js';
export type { ToolAnnotations, ToolSpec, Trust } from './tool.js';
export { toolAnnotationsSchema, toolSpecSchema, trustSchema } from './tool.js';
