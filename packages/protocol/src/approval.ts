import { z } from 'zod';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'withdrawn'] as const;
export const approvalStatusSchema = z.enum(APPROVAL_STATUSES);
/** pending → approved / denied / expired / withdrawn. Only `pending` ever changes. */
export type ApprovalStatus = z.infer<typeof approvalStatusSchema>;

/**
 * An approval: the request made for an `ask` decision. Times are epoch milliseconds.
 * `expires_at` is when a pending approval stops waiting (the policy's wait limit).
 */
export const approvalSchema = z.object({
  id: z.string(),
  run_id: z.string(),
  call_id: z.string(),
  tool: z.string(),
  arguments: z.unknown().optional(),
  arguments_digest: z.string(),
  rules: z.array(z.string()),
  reason: z.string(),
  status: approvalStatusSchema,
  created_at: z.number().int(),
  expires_at: z.number().int(),
  resolved_at: z.number().int().optional(),
  reviewer: z.string().optional(),
  response_reason: z.string().optional(),
  edited: z.boolean().optional(),
  /** Values the framework adds to `arguments` before the call runs (not the model's), by name. */
  injected: z.record(z.string(), z.unknown()).optional(),
});
export type Approval = z.infer<typeof approvalSchema>;

/**
 * A reviewer's answer to an approval. `arguments` is present only when the reviewer edited the
 * call; an edit counts as a denial unless the policy allows edits.
 */
export const approvalResponseSchema = z.object({
  approved: z.boolean(),
  reviewer: z.string().min(1),
  reason: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});
export type ApprovalResponse = z.infer<typeof approvalResponseSchema>;

/**
 * A grant: the one-use permission to run one call, bound to run, call, tool and arguments
 * digest. `token` is 256 random bits (base64url) given once to the holder; stores keep only its
 * sha256. Version 1 of the grant format.
 */
export const grantSchema = z.object({
  v: z.literal(1),
  token: z.string(),
  run_id: z.string(),
  call_id: z.string(),
  tool: z.string(),
  arguments_digest: z.string(),
  expires_at: z.number().int(),
});
export type Grant = z.infer<typeof grantSchema>;

/** What a store keeps of a grant: everything but the token, which is kept only as a hash. */
export type StoredGrant = Omit<Grant, 'token'> & { token_hash: string; consumed_at?: number };
