// @callgate/core: the gate. Policy, decisions, approvals, grants, outcomes, the engine that writes
// every event to the ledger, and the Store contract. The ledger and its verifier are in
// `@callgate/core/ledger`, what adapters build on in `@callgate/core/adapter`, hashes, keys and
// commitments in `@callgate/core/crypto`. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

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
export type { ApprovalChannel, ApprovalEvent, ApprovalHandout } from './gate/approval-channel.js';
export type { ApprovalState } from './gate/approvals.js';
export type { CallVerdict, ModelMessage } from './gate/decide.js';
export type { DecideOptions, EngineOptions, RunStart } from './gate/engine.js';
export { Engine } from './gate/engine.js';
export type { ExecutableCall, ExecuteStepOptions, StepResult, ToolExecutor } from './gate/execute-step.js';
export { executeStep } from './gate/execute-step.js';
export type { GrantBinding } from './gate/grants.js';
export type { GuardrailOptions, GuardrailPattern } from './gate/guardrails.js';
export { uuidv7 } from './gate/ids.js';
export type { Logger } from './gate/logger.js';
export { silentLogger } from './gate/logger.js';
export type { CallOutcomeReport } from './gate/outcomes.js';
export type { RegisteredTool } from './gate/registry.js';
export { ToolRegistry } from './gate/registry.js';
export type { StepOutcome } from './gate/step-outcomes.js';
export type { JsonLimits } from './json/safe-json.js';
export { parseJsonLossless, readArguments } from './json/safe-json.js';
export { truncateText } from './json/text.js';
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
export type { WholeNumberBounds } from './policy/whole-number.js';
export { readWholeNumber, wholeNumberProblem } from './policy/whole-number.js';
export { YamlLocator } from './policy/yaml-locator.js';
export type { InexactYamlNumber } from './policy/yaml-numbers.js';
export { firstInexactNumber } from './policy/yaml-numbers.js';
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
