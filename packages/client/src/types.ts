// The shapes the callgate HTTP API sends and accepts: inferred from the zod schemas in
// `@callgate/protocol` that the server validates with and the OpenAPI document is generated
// from. The names are the client's public names (kept as aliases of the inferred types).
import type {
  ApprovalStateAnswer,
  ApiKeyInfo as ProtocolApiKeyInfo,
  ApiKeyRole as ProtocolApiKeyRole,
  CallRequest as ProtocolCallRequest,
  CallSummary as ProtocolCallSummary,
  ConsumedGrant as ProtocolConsumedGrant,
  ConsumeGrantRequest as ProtocolConsumeGrantRequest,
  DecideResult as ProtocolDecideResult,
  Health as ProtocolHealth,
  MessageRequest as ProtocolMessageRequest,
  OutcomeRequest as ProtocolOutcomeRequest,
  OutcomeResult as ProtocolOutcomeResult,
  Run as ProtocolRun,
  RunStartRequest as ProtocolRunStartRequest,
  Verdict as ProtocolVerdict,
  VerifyReport as ProtocolVerifyReport,
} from '@callgate/protocol';

/** A run (`runSchema`). Times are epoch milliseconds. */
export type Run = ProtocolRun;
/** What starts a run (`startRunBody`); `principal` defaults to the API key's name. */
export type RunStartRequest = ProtocolRunStartRequest;
/** One attempt of one call, as the server tracks it (`callRowSchema`). */
export type CallSummary = ProtocolCallSummary;
/** A tool call as the model asked for it (`callBody`; `arguments`: an object or JSON text of one). */
export type CallRequest = ProtocolCallRequest;
/** A model message (`messageBody`): its content is committed in the ledger, never stored there. */
export type MessageRequest = ProtocolMessageRequest;
/** The gate's answer for one call (`verdictSchema`): `allowed`, `pending` or `refused`. */
export type Verdict = ProtocolVerdict;
/** What became of one outcome a request carried (`outcomeResultSchema`). */
export type OutcomeResult = ProtocolOutcomeResult;
/** A step's decisions, and what became of the outcomes the request carried (`decideResultSchema`). */
export type DecideResult = ProtocolDecideResult;
/** How a call ended, as reported by whoever ran it (`outcomeBody`). */
export type OutcomeRequest = ProtocolOutcomeRequest;
/** An approval and, for the key that owns its run once approved, the grant and arguments (`approvalStateSchema`). */
export type ApprovalState = ApprovalStateAnswer;
/** A grant to consume with exactly one of `arguments` and `arguments_digest` (`consumeGrantBody`). */
export type ConsumeGrantRequest = ProtocolConsumeGrantRequest;
/** A consumed grant (`consumedGrantSchema`). */
export type ConsumedGrant = ProtocolConsumedGrant;
/** The verifier's report on a bundle (`verifyReportSchema`). */
export type VerifyReport = ProtocolVerifyReport;
/** What a key may do: `agent`, `reviewer` or `admin`. */
export type ApiKeyRole = ProtocolApiKeyRole;
/** An API key as listed, never its text or hash (`apiKeySchema`). */
export type ApiKeyInfo = ProtocolApiKeyInfo;
/** The server's health (`healthSchema`). */
export type Health = ProtocolHealth;
