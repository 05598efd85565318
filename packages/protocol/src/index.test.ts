import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/protocol public API', () => {
  it('exports exactly the pinned names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "API_KEY_ROLES",
        "APPROVAL_STATUSES",
        "BUNDLE_FORMAT",
        "BUNDLE_FORMAT_V2",
        "CallgateError",
        "EFFECTS",
        "ERROR_KINDS",
        "OUTCOMES",
        "RECORD_TYPES",
        "REFUSAL_KINDS",
        "apiKeyNameSchema",
        "apiKeySchema",
        "approvalAnswerSchema",
        "approvalResponseSchema",
        "approvalSchema",
        "approvalStateSchema",
        "approvalStatusSchema",
        "approveBody",
        "batchInclusionSchema",
        "bundleQuery",
        "bundleSchema",
        "bundleV2Schema",
        "callBody",
        "callRowSchema",
        "consistencyProofSchema",
        "consumeGrantBody",
        "consumedGrantSchema",
        "createKeyBody",
        "decideResultSchema",
        "decisionSchema",
        "decisionsBody",
        "denyBody",
        "digestSchema",
        "effectSchema",
        "endRunBody",
        "endedRunSchema",
        "errorBody",
        "errorBodySchema",
        "errorKindSchema",
        "gapBody",
        "getApprovalQuery",
        "grantSchema",
        "healthSchema",
        "identifiedCallSchema",
        "inclusionProofSchema",
        "isCallgateError",
        "ledgerRecordSchema",
        "listApprovalsQuery",
        "listRunsQuery",
        "messageBody",
        "normalizeReasonSchema",
        "openingSchema",
        "outcomeBody",
        "outcomeResultSchema",
        "outcomeSchema",
        "outcomesBody",
        "outcomesList",
        "protocolJsonSchemas",
        "queryFlag",
        "recordBodySchema",
        "recordTypeSchema",
        "runDetailSchema",
        "runSchema",
        "startRunBody",
        "toolAnnotationsSchema",
        "toolCallSchema",
        "toolSpecSchema",
        "trustSchema",
        "verdictSchema",
        "verifyQuery",
        "verifyReportSchema",
        "withdrawBody",
      ]
    `);
  });

  it('exports exactly the pinned types', () => {
    const source = readFileSync(new URL('./index.ts', import.meta.url), 'utf8');
    const names = [...source.matchAll(/export type \{([^}]*)\}/g)]
      .flatMap((match) => (match[1] ?? '').split(','))
      .map((name) => name.trim())
      .filter((name) => name !== '')
      .sort();
    expect(names).toEqual([
      'AnyBundle',
      'ApiKeyInfo',
      'ApiKeyRole',
      'Approval',
      'ApprovalAnswer',
      'ApprovalResponse',
      'ApprovalStateAnswer',
      'ApprovalStatus',
      'BatchInclusion',
      'Bundle',
      'BundleV2',
      'CallRequest',
      'CallSummary',
      'ConsistencyProof',
      'ConsumeGrantRequest',
      'ConsumedGrant',
      'CreateKeyRequest',
      'DecideRequest',
      'DecideResult',
      'Decision',
      'Effect',
      'EndRunRequest',
      'ErrorBody',
      'ErrorDetails',
      'ErrorKind',
      'GapRequest',
      'Grant',
      'Health',
      'IdentifiedCall',
      'InclusionProof',
      'LedgerRecord',
      'LedgerRecordOf',
      'MessageRequest',
      'Opening',
      'Outcome',
      'OutcomeRequest',
      'OutcomeResult',
      'RecordBody',
      'RecordType',
      'Run',
      'RunStartRequest',
      'StoredGrant',
      'ToolAnnotations',
      'ToolCall',
      'ToolSpec',
      'Trust',
      'Verdict',
      'VerifyReport',
    ]);
  });

  it('refusal bodies carry kind and message', () => {
    const error = new api.CallgateError('policy-denied', 'no', { rules: ['r1'] });
    expect(error.toBody()).toEqual({ error: { kind: 'policy-denied', message: 'no', rules: ['r1'] } });
    expect(api.isCallgateError(error)).toBe(true);
    expect(api.isCallgateError(new Error('x'))).toBe(false);
    expect(api.errorBodySchema.parse(error.toBody())).toEqual(error.toBody());
  });
});
