// @callgate/client: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type {
  AnyBundle,
  Approval,
  ApprovalStatus,
  Bundle,
  BundleV2,
  ErrorKind,
  Grant,
  Outcome,
  ToolSpec,
} from '@callgate/protocol';
export { CallgateError, isCallgateError } from '@callgate/protocol';
export type { CallgateClientOptions } from './client.js';
export { CallgateClient } from './client.js';
export type { RemoteGovernor } from './remote-governor.js';
export { remoteGovernor } from './remote-governor.js';
export type {
  ApiKeyInfo,
  ApiKeyRole,
  ApprovalState,
  CallRequest,
  CallSummary,
  ConsumedGrant,
  ConsumeGrantRequest,
  DecideResult,
  Health,
  MessageRequest,
  OutcomeRequest,
  OutcomeResult,
  Run,
  RunStartRequest,
  Verdict,
  VerifyReport,
} from './types.js';
