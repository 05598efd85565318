// The HTTP API's request and response shapes, from `@callgate/protocol` (one source for the
// server's validation, the OpenAPI document and `@callgate/client`'s types), and the server's
// reading of a query flag.
export type { ApiKeyRole } from '@callgate/protocol';
export {
  API_KEY_ROLES,
  apiKeyListSchema,
  apiKeyNameSchema as keyName,
  apiKeySchema,
  approvalAnswerSchema,
  approvalStateSchema,
  approveBody,
  bundleQuery,
  callBody,
  callRowSchema,
  consumedGrantSchema,
  consumeGrantBody,
  createdApiKeySchema,
  createKeyBody,
  decideResultSchema,
  decisionsBody,
  denyBody,
  endedRunSchema,
  endRunBody,
  gapBody,
  getApprovalQuery,
  healthSchema,
  listApprovalsQuery,
  listRunsQuery,
  messageBody,
  outcomeBody,
  outcomeResultSchema,
  outcomesBody,
  outcomesList,
  policyReloadSchema,
  policyStateSchema,
  readySchema,
  reloadPolicyBody,
  revokedApiKeySchema,
  runDetailSchema,
  runSchema,
  startRunBody,
  verdictSchema,
  verifyQuery,
  verifyReportSchema,
  withdrawBody,
} from '@callgate/protocol';

/** True when a query flag (`?strict`, `?strict=true`, `?strict=false`) was given and is not `false`. */
export function flagOn(value: '' | 'true' | 'false' | undefined): boolean {
  return value !== undefined && value !== 'false';
}
