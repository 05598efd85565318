import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/protocol public API', () => {
  it('exports exactly the pinned names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "APPROVAL_STATUSES",
        "BUNDLE_FORMAT",
        "BUNDLE_FORMAT_V2",
        "BUNDLE_FORMAT_V3",
        "CallgateError",
        "EFFECTS",
        "ERROR_KINDS",
        "OUTCOMES",
        "RECORD_TYPES",
        "REFUSAL_KINDS",
        "approvalResponseSchema",
        "approvalSchema",
        "approvalStatusSchema",
        "batchInclusionSchema",
        "bundleSchema",
        "bundleV2Schema",
        "bundleV3Schema",
        "consistencyProofSchema",
        "decisionSchema",
        "digestSchema",
        "effectSchema",
        "errorBody",
        "errorBodySchema",
        "errorKindSchema",
        "grantSchema",
        "identifiedCallSchema",
        "inclusionProofSchema",
        "isCallgateError",
        "isKeyedDigestField",
        "keyedDigestSchema",
        "ledgerRecordSchema",
        "ledgerRecordV2Schema",
        "normalizeReasonSchema",
        "openingSchema",
        "outcomeSchema",
        "protocolJsonSchemas",
        "recordBodySchema",
        "recordTypeSchema",
        "runKeySchema",
        "toolAnnotationsSchema",
        "toolCallSchema",
        "toolSpecSchema",
        "trustSchema",
      ]
    `);
  });

  it('refusal bodies carry kind and message', () => {
    const error = new api.CallgateError('policy-denied', 'no', { rules: ['r1'] });
    expect(error.toBody()).toEqual({ error: { kind: 'policy-denied', message: 'no', rules: ['r1'] } });
    expect(api.isCallgateError(error)).toBe(true);
    expect(api.isCallgateError(new Error('x'))).toBe(false);
    expect(api.errorBodySchema.parse(error.toBody())).toEqual(error.toBody());
  });
});
