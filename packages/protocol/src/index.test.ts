import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/protocol public API', () => {
  it('exports exactly the pinned names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "APPROVAL_STATUSES",
        "BUNDLE_FORMAT",
        "BUNDLE_FORMAT_V2",
        "CallgateError",
        "EFFECTS",
        "ERROR_KINDS",
        "OUTCOMES",
        "RECORD_TYPES",
        "approvalResponseSchema",
        "approvalSchema",
        "approvalStatusSchema",
        "batchInclusionSchema",
        "bundleSchema",
        "bundleV2Schema",
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
        "ledgerRecordSchema",
        "openingSchema",
        "outcomeSchema",
        "protocolJsonSchemas",
        "recordBodySchema",
        "recordTypeSchema",
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
