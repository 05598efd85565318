// @callgate/server: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { AppOptions } from './app.js';
export { createApp } from './app.js';
export type { ServerConfig } from './config.js';
export { DEFAULT_MCP_PROFILE, DENY_ALL_POLICY_TEXT, readPolicyFile, readServerConfig } from './config.js';
export type { HealthChecks, HealthContributor, HealthProblem } from './health.js';
export { bodyTooLarge } from './http/body-limit.js';
export type { ErrorStatus } from './http/errors.js';
export { HTTP_STATUS_OF_KIND, httpStatusOf, methodNotAllowedResponse } from './http/errors.js';
export type { RequestTimeouts } from './http/request-timeout.js';
export {
  answerClientErrors,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  requestTimeoutOptions,
} from './http/request-timeout.js';
export type { ApiKeyRole } from './http/schemas.js';
export { API_KEY_ROLES } from './http/schemas.js';
export { prepareSocketPath } from './http/unix-socket.js';
export { drainBeforeClose, UNREAD_BODY_DRAIN_LIMIT } from './http/unread-body.js';
export type { CreatedApiKey } from './keys.js';
export { API_KEY_PATTERN, apiKeyHash, createApiKey, revokeApiKey } from './keys.js';
export type { PolicyReload, PolicySourceReader } from './policy-reload.js';
export type { RunningServer, StartServerOptions } from './start.js';
export { startServer } from './start.js';
export type { Telemetry } from './telemetry.js';
export { startTelemetry } from './telemetry.js';
export type { TracingOptions } from './tracing.js';
export { traceLedger } from './tracing.js';
export type { Session, SessionBacking } from './ui/session.js';
export { sessionIdHash } from './ui/session.js';
export { SERVER_VERSION } from './version.js';
export type { WebhookOptions } from './webhook.js';
export {
  attachApprovalPort,
  verifyWebhookSignature,
  WebhookApprovalPort,
  webhookSignature,
} from './webhook.js';
export type { WebhookReceiverOptions } from './webhook-receiver.js';
export { createWebhookReceiver, WebhookDeliveryRefused } from './webhook-receiver.js';
