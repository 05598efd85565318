import { z } from 'zod';
import { approvalStatusSchema } from './approval.js';
import { effectSchema, outcomeSchema } from './call.js';
import { errorKindSchema } from './errors.js';
import type { BundleV3, LedgerRecordV2 } from './ledger-v2.js';

/** `sha256:<64 lowercase hex>`: a digest or a commitment. */
export const digestSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256:<64 hex digits>');

export const RECORD_TYPES = [
  'run-start',
  'policy-snapshot',
  'model-message',
  'call-decision',
  'approval-request',
  'approval-response',
  'call-end',
  'gap',
  'run-end',
  'mcp-exchange',
  'refusal',
  'effective-arguments',
] as const;
export const recordTypeSchema = z.enum(RECORD_TYPES);
export type RecordType = z.infer<typeof recordTypeSchema>;

/**
 * Fields every ledger record carries (format version 1). `seq` is the record's 0-based index in
 * the log (its Merkle leaf index); `run_seq` its 0-based index in its run; `ts` epoch ms; `prev`
 * the digest (sha256 of RFC 8785 canonical JSON) of the run's previous record, `null` first.
 */
const base = {
  v: z.literal(1),
  seq: z.number().int().min(0),
  run_id: z.string(),
  run_seq: z.number().int().min(0),
  ts: z.number().int(),
  prev: digestSchema.nullable(),
};

export const runStartBody = z.object({
  type: z.literal('run-start'),
  principal: z.string(),
  framework: z.string(),
  labels: z.record(z.string(), z.string()),
  parent_run_id: z.string().optional(),
});
export const policySnapshotBody = z.object({
  type: z.literal('policy-snapshot'),
  policy_digest: digestSchema,
});
/**
 * Why a committed value was replaced by a `callgate-normalize/1` or `/2` marker (it had no RFC 8785
 * form; `inexact-number`, a number whose digits a double does not hold, only under `/2`); see
 * docs/ledger.md, "Normalisation".
 */
export const normalizeReasonSchema = z.enum([
  'lone-surrogate',
  'non-finite-number',
  'unsafe-integer',
  'inexact-number',
  'not-json',
  'over-size',
]);

export const modelMessageBody = z.object({
  type: z.literal('model-message'),
  role: z.string(),
  content_commitment: digestSchema.nullable(),
  /** Present when the content was committed as a normalisation marker, with the reasons. */
  content_normalized: z.array(normalizeReasonSchema).optional(),
  tool_calls: z.array(
    z.object({
      call_id: z.string(),
      minted: z.boolean(),
      tool: z.string(),
      arguments_commitment: digestSchema,
    }),
  ),
});
export const callDecisionBody = z.object({
  type: z.literal('call-decision'),
  call_id: z.string(),
  minted: z.boolean(),
  attempt: z.number().int().min(1),
  tool: z.string(),
  arguments_digest: digestSchema.nullable(),
  arguments_commitment: digestSchema.nullable(),
  effect: effectSchema,
  rules: z.array(z.string()),
  reason: z.string(),
  policy_digest: digestSchema,
  error_kind: errorKindSchema.optional(),
  provenance_untrusted: z.boolean().optional(),
});
export const approvalRequestBody = z.object({
  type: z.literal('approval-request'),
  approval_id: z.string(),
  call_id: z.string(),
  tool: z.string(),
  arguments_digest: digestSchema,
  rules: z.array(z.string()),
  reason: z.string(),
  expires_at: z.number().int(),
});
export const approvalResponseBody = z.object({
  type: z.literal('approval-response'),
  approval_id: z.string(),
  call_id: z.string(),
  status: approvalStatusSchema.exclude(['pending']),
  reviewer: z.string().nullable(),
  reason: z.string().nullable(),
  edited: z.boolean(),
  arguments_digest: digestSchema,
});
export const callEndBody = z.object({
  type: z.literal('call-end'),
  call_id: z.string(),
  attempt: z.number().int().min(1),
  tool: z.string(),
  outcome: outcomeSchema,
  arguments_digest: digestSchema.nullable(),
  result_commitment: digestSchema.nullable(),
  /** Present when the result was committed as a normalisation marker, with the reasons. */
  result_normalized: z.array(normalizeReasonSchema).optional(),
  error_kind: errorKindSchema.optional(),
  duration_ms: z.number().min(0).optional(),
  grant_consumed: z.boolean(),
});
export const gapBody = z.object({
  type: z.literal('gap'),
  reason: z.string(),
  from_ts: z.number().int(),
  to_ts: z.number().int(),
  calls: z.number().int().min(0),
});
export const runEndBody = z.object({
  type: z.literal('run-end'),
  /** `abandoned`: nothing came from the agent for the engine's idle limit; the gate ended the run. */
  status: z.enum(['completed', 'failed', 'cancelled', 'abandoned']),
  calls: z.number().int().min(0),
});

/**
 * A request the MCP gateway passed through to an upstream that is not a tool call (resources,
 * prompts, completions, logging): which method, which upstream and target (a resource URI or a
 * prompt name), and commitments of the parameters and the result.
 */
export const mcpExchangeBody = z.object({
  type: z.literal('mcp-exchange'),
  method: z.string(),
  upstream: z.string(),
  target: z.string().nullable(),
  params_commitment: digestSchema,
  result_commitment: digestSchema.nullable(),
  error_kind: errorKindSchema.optional(),
});

/** What a refused attempt tried (see {@link refusalBody}). */
export const REFUSAL_KINDS = [
  'approval-not-pending',
  'approval-unknown',
  'grant-invalid',
  'outcome-contradicts-grant',
  'tool-out-of-profile',
] as const;

/**
 * A refused attempt, kept as evidence: an answer to an approval that is no longer pending, a
 * consume of an unknown, spent or wrongly bound grant, an outcome claiming a grant that was not
 * consumed, a call to a tool outside the caller's profile. `actor` is who tried (a key or reviewer
 * name), `reason` what the gate said. At most a bounded number per run are written; the last one
 * written has `suppressed: true` and later ones are not recorded.
 */
export const refusalBody = z.object({
  type: z.literal('refusal'),
  kind: z.enum(REFUSAL_KINDS),
  actor: z.string().nullable(),
  call_id: z.string().nullable(),
  approval_id: z.string().nullable(),
  tool: z.string().nullable(),
  reason: z.string(),
  suppressed: z.boolean().optional(),
});

/**
 * The arguments that run, beside the model's: written after a call's `call-decision` when the
 * framework adds values the model did not send (`ToolCall.injected`). `arguments_digest` is the
 * decision's (the model's arguments, as decided); `effective_arguments_digest` the digest, by the same
 * function, of those arguments with the injected values set; `injected` the names of the
 * injected values, sorted.
 */
export const effectiveArgumentsBody = z.object({
  type: z.literal('effective-arguments'),
  call_id: z.string(),
  attempt: z.number().int().min(1),
  tool: z.string(),
  arguments_digest: digestSchema,
  effective_arguments_digest: digestSchema,
  injected: z.array(z.string()),
});

export const recordBodySchema = z.discriminatedUnion('type', [
  runStartBody,
  policySnapshotBody,
  modelMessageBody,
  callDecisionBody,
  approvalRequestBody,
  approvalResponseBody,
  callEndBody,
  gapBody,
  runEndBody,
  mcpExchangeBody,
  refusalBody,
  effectiveArgumentsBody,
]);
/** The type-specific part of a record, as the engine hands it to the ledger. */
export type RecordBody = z.infer<typeof recordBodySchema>;

export const ledgerRecordSchema = z.discriminatedUnion('type', [
  runStartBody.extend(base).strict(),
  policySnapshotBody.extend(base).strict(),
  modelMessageBody.extend(base).strict(),
  callDecisionBody.extend(base).strict(),
  approvalRequestBody.extend(base).strict(),
  approvalResponseBody.extend(base).strict(),
  callEndBody.extend(base).strict(),
  gapBody.extend(base).strict(),
  runEndBody.extend(base).strict(),
  mcpExchangeBody.extend(base).strict(),
  refusalBody.extend(base).strict(),
  effectiveArgumentsBody.extend(base).strict(),
]);
/** One ledger record, format version 1. Its canonical bytes are RFC 8785 JSON. */
export type LedgerRecordV1 = z.infer<typeof ledgerRecordSchema>;
/** One ledger record, format version 1 or 2 (see `ledgerRecordV2Schema`). */
export type LedgerRecord = LedgerRecordV1 | LedgerRecordV2;
/** A record of one given type. */
export type LedgerRecordOf<T extends RecordType> = Extract<LedgerRecord, { type: T }>;

/**
 * An RFC 9162 inclusion proof of the record at `leaf_index` in the tree of `tree_size` leaves.
 * `hashes` are base64 (standard alphabet) SHA-256 node hashes, leaf side first.
 */
export const inclusionProofSchema = z.object({
  leaf_index: z.number().int().min(0),
  tree_size: z.number().int().min(1),
  hashes: z.array(z.string()),
});
export type InclusionProof = z.infer<typeof inclusionProofSchema>;

/** An RFC 9162 consistency proof between two tree sizes, hashes base64. */
export const consistencyProofSchema = z.object({
  from_size: z.number().int().min(1),
  to_size: z.number().int().min(1),
  hashes: z.array(z.string()),
});
export type ConsistencyProof = z.infer<typeof consistencyProofSchema>;

/** An opening of a commitment: the salt (base64url, 16 bytes) and the committed value. */
export const openingSchema = z.object({
  commitment: digestSchema,
  salt: z.string(),
  value: z.unknown(),
});
export type Opening = z.infer<typeof openingSchema>;

export const BUNDLE_FORMAT = 'callgate-bundle/1' as const;

/**
 * A bundle (`callgate-bundle/1`): an exported run with everything needed to verify it offline.
 * `public_key` is a C2SP note verifier key (`<name>+<hex key id>+<base64 key>`); `checkpoints`
 * are C2SP signed notes, oldest first; `proofs[i]` proves `records[i]` under the last checkpoint;
 * `policies` are the policy documents the decisions name; `synchronous` is the store's durability
 * mode when it was exported (`NORMAL` or `FULL`).
 */
export const bundleSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  origin: z.string(),
  public_key: z.string(),
  exported_at: z.number().int(),
  synchronous: z.enum(['NORMAL', 'FULL', 'MEMORY']),
  records: z.array(z.unknown()),
  proofs: z.array(inclusionProofSchema),
  checkpoints: z.array(z.string()),
  consistency: z.array(consistencyProofSchema),
  policies: z.array(z.object({ digest: digestSchema, policy: z.unknown() })),
  openings: z.array(openingSchema).optional(),
  /** Log key rotations (callgate-key-rotation/v1 signed notes), oldest first; absent when the key never changed. */
  key_rotations: z.array(z.string()).optional(),
});
export type Bundle = z.infer<typeof bundleSchema>;

export const BUNDLE_FORMAT_V2 = 'callgate-bundle/2' as const;

/**
 * One proof that every record of a bundle is in the tree of the last checkpoint (RFC 9162 Merkle
 * tree, `tree_size` leaves): the hashes (base64) of the subtrees that hold none of the bundle's
 * records, in the order they are met walking the tree left to right with RFC 9162's split
 * (MTH(D[n]) = HASH(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n])), k the largest power of two below n): a
 * subtree with no record of the bundle is one hash here; one with records is split further, down
 * to the records' own leaves. The verifier recomputes the root from the records and these hashes.
 * A run of consecutive records costs about 2·log2(n) hashes, not one proof per record.
 */
export const batchInclusionSchema = z.object({
  tree_size: z.number().int().min(0),
  hashes: z.array(z.string()),
});
export type BatchInclusion = z.infer<typeof batchInclusionSchema>;

/**
 * A bundle (`callgate-bundle/2`): `callgate-bundle/1` without one inclusion proof per record;
 * `inclusion` proves all the records under the last checkpoint at once (see
 * {@link batchInclusionSchema}). Half the size or less, and verified at hashing speed. Exports
 * write it unless per-record proofs are asked for (`--proofs`, which writes `callgate-bundle/1`).
 */
export const bundleV2Schema = bundleSchema.omit({ proofs: true }).extend({
  format: z.literal(BUNDLE_FORMAT_V2),
  inclusion: batchInclusionSchema,
});
export type BundleV2 = z.infer<typeof bundleV2Schema>;

/** Any bundle callgate reads: version 1, 2 or 3. */
export type AnyBundle = Bundle | BundleV2 | BundleV3;
