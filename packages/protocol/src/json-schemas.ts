import { z } from 'zod';
import { approvalResponseSchema, approvalSchema, grantSchema } from './approval.js';
import { decisionSchema, outcomeSchema, toolCallSchema } from './call.js';
import { errorBodySchema, errorKindSchema } from './errors.js';
import { bundleSchema, bundleV2Schema, ledgerRecordSchema } from './ledger.js';
import { bundleV3Schema, ledgerRecordV2Schema } from './ledger-v2.js';
import { toolSpecSchema } from './tool.js';

const schemas = {
  'error-kind': errorKindSchema,
  'error-body': errorBodySchema,
  'tool-spec': toolSpecSchema,
  'tool-call': toolCallSchema,
  decision: decisionSchema,
  outcome: outcomeSchema,
  approval: approvalSchema,
  'approval-response': approvalResponseSchema,
  grant: grantSchema,
  'ledger-record': ledgerRecordSchema,
  bundle: bundleSchema,
  'bundle-v2': bundleV2Schema,
  'ledger-record-v2': ledgerRecordV2Schema,
  'bundle-v3': bundleV3Schema,
} as const;

/**
 * JSON Schemas (draft 2020-12) of every wire and durable format, by name. The files under
 * `test/fixtures/schemas/` are these, written by `npm run schemas`; tests in TypeScript and
 * Python validate against those files.
 */
export function protocolJsonSchemas(): Record<keyof typeof schemas, Record<string, unknown>> {
  const out = {} as Record<keyof typeof schemas, Record<string, unknown>>;
  for (const [name, schema] of Object.entries(schemas) as [keyof typeof schemas, z.ZodType][]) {
    out[name] = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  }
  return out;
}
