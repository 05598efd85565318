// The HTTP API's response shapes. The OpenAPI document is generated from these schemas and
// `@callgate/client`'s answer types are inferred from them. Answers are plain objects (a field
// a newer server adds does not break an older client).
import { z } from 'zod';
import { approvalSchema, grantSchema } from './approval.js';
import { decisionSchema, outcomeSchema } from './call.js';
import { errorBodySchema } from './errors.js';
import { API_KEY_ROLES } from './http-requests.js';

export const runSchema = z.object({
  run_id: z.string(),
  principal: z.string(),
  framework: z.string(),
  labels: z.record(z.string(), z.string()),
  parent_run_id: z.string().optional(),
  status: z.enum(['running', 'completed', 'failed', 'cancelled', 'abandoned']),
  started_at: z.number().int(),
  ended_at: z.number().int().optional(),
});

export const callRowSchema = z.object({
  run_id: z.string(),
  call_id: z.string(),
  attempt: z.number().int(),
  minted: z.boolean(),
  tool: z.string(),
  arguments_digest: z.string().nullable(),
  decision: z.enum(['allow', 'deny', 'ask', 'refused']),
  rules: z.array(z.string()),
  approval_id: z.string().optional(),
  outcome: outcomeSchema.optional(),
  decided_at: z.number().int(),
  ended_at: z.number().int().optional(),
});

export const verdictSchema = z.object({
  call_id: z.string(),
  minted: z.boolean(),
  attempt: z.number().int(),
  tool: z.string(),
  status: z.enum(['allowed', 'pending', 'refused']),
  arguments: z.record(z.string(), z.unknown()).optional(),
  arguments_digest: z.string().optional(),
  decision: decisionSchema.optional(),
  approval: approvalSchema.optional(),
  grant: grantSchema.optional(),
  /** The grant was consumed with the decision (`consume`): it is already spent. */
  grant_consumed: z.boolean().optional(),
  error: errorBodySchema.shape.error.optional(),
  provenance: z.object({ untrusted: z.boolean(), sources: z.array(z.string()) }).optional(),
});

/** What became of one outcome of a batch: the outcome recorded, or why it was not. */
export const outcomeResultSchema = z.object({
  call_id: z.string(),
  outcome: outcomeSchema.optional(),
  error: errorBodySchema.shape.error.optional(),
});

export const approvalStateSchema = z.object({
  approval: approvalSchema,
  /** Only for the agent key that started the run (or its principal's key) and for admins. */
  grant: grantSchema.optional(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

export const consumedGrantSchema = z.object({
  consumed: z.literal(true),
  run_id: z.string(),
  call_id: z.string(),
  tool: z.string(),
  arguments_digest: z.string(),
  expires_at: z.number().int(),
});

export const verifyReportSchema = z.object({
  ok: z.boolean(),
  failures: z.array(
    z.object({
      check: z.string(),
      message: z.string(),
      seq: z.number().int().optional(),
      run_id: z.string().optional(),
      type: z.string().optional(),
    }),
  ),
  warnings: z.array(z.string()),
  /** Bundle fields no signature covers (`exported_at`, `synchronous`): the exporter's claims. */
  unsigned: z.array(z.string()).optional(),
  records: z.number().int(),
  checkpoints: z.number().int(),
});

export const apiKeySchema = z.object({
  name: z.string(),
  role: z.enum(API_KEY_ROLES),
  created_at: z.number().int(),
  revoked_at: z.number().int().optional(),
});

export const healthSchema = z.object({
  /** `degraded` when a health check found a problem (see `problems`, and `store`). */
  status: z.enum(['ok', 'degraded', 'draining']),
  version: z.string(),
  /** The log's verifier key, to pin when verifying this server's bundles (`callgate verify --public-key`). */
  log_key: z.string().optional(),
  /** What is wrong, one entry per problem (absent when nothing is). */
  problems: z.array(z.object({ check: z.string(), message: z.string() })).optional(),
  /** Whether the store can write; `since` is epoch ms of the first failed write. */
  store: z
    .object({
      status: z.enum(['ok', 'unavailable']),
      reason: z.string().optional(),
      since: z.number().int().optional(),
    })
    .optional(),
  /** The MCP gateway's upstreams, when the server has a gateway (errors are logged, not shown). */
  upstreams: z
    .array(
      z.object({
        name: z.string(),
        status: z.enum(['idle', 'connecting', 'connected', 'disconnected', 'closed']),
        /** How many of its tools clients can see. */
        tools: z.number().int(),
      }),
    )
    .optional(),
});

/** `GET /v1/runs/{id}`: the run and every call attempt of it. */
export const runDetailSchema = z.object({ run: runSchema, calls: z.array(callRowSchema) });

/** `POST /v1/runs/{id}/end`: the ended run and what became of the outcomes the request carried. */
export const endedRunSchema = runSchema.extend({ outcomes: z.array(outcomeResultSchema).optional() });

/** `POST /v1/runs/{id}/decisions`: a verdict per call, in order, and what became of the carried outcomes. */
export const decideResultSchema = z.object({
  run_id: z.string(),
  verdicts: z.array(verdictSchema),
  outcomes: z.array(outcomeResultSchema).optional(),
});

/** `POST /v1/approvals/{id}/approve` and `/deny`: the approval as answered and what the answer amounted to. */
export const approvalAnswerSchema = z.object({
  approval: approvalSchema,
  /** The status the answer gave the approval (an approve with edits may count as a denial). */
  effective: z.enum(['approved', 'denied']),
  /** Why `effective` differs from what was asked, when it does. */
  message: z.string().optional(),
});

/** `GET /v1/keys`. */
export const apiKeyListSchema = z.object({ keys: z.array(apiKeySchema) });

/** `POST /v1/keys`: the new key, with its text (`key`), shown once. */
export const createdApiKeySchema = apiKeySchema.extend({ key: z.string() });

/** `DELETE /v1/keys/{name}`. */
export const revokedApiKeySchema = z.object({ revoked: z.literal(true), name: z.string() });

/** `GET /v1/ready`: 200 when the server takes traffic, 503 (with the problems) while it drains or is degraded. */
export const readySchema = z.object({
  ready: z.boolean(),
  status: z.enum(['ok', 'degraded', 'draining']),
  problems: z.array(z.object({ check: z.string(), message: z.string() })).optional(),
});

/** `GET /v1/admin/policy`: the policy in force, its digest, and whether the server can read it again. */
export const policyStateSchema = z.object({
  policy_digest: z.string(),
  policy: z.unknown(),
  reloadable: z.boolean(),
});

/** `POST /v1/admin/policy`: what the reload did (`run_id` names the run its record is in). */
export const policyReloadSchema = z.object({
  changed: z.boolean(),
  policy_digest: z.string(),
  previous_digest: z.string(),
  source: z.string(),
  run_id: z.string().optional(),
});

// --- inferred types (what a client reads) ---------------------------------------------------

/** A run. Times are epoch milliseconds. */
export type Run = z.output<typeof runSchema>;
/** One attempt of one call, as the server tracks it. */
export type CallSummary = z.output<typeof callRowSchema>;
/**
 * The gate's answer for one call: `allowed` (run it with `arguments`, consuming `grant`),
 * `pending` (wait for `approval`), or `refused` (`error` is the call's result for the model).
 */
export type Verdict = z.output<typeof verdictSchema>;
/** What became of one outcome a request carried: the outcome recorded, or why it was not. */
export type OutcomeResult = z.output<typeof outcomeResultSchema>;
/** A step's decisions, and what became of the outcomes the request carried (in order). */
export type DecideResult = z.output<typeof decideResultSchema>;
/** An approval and, for the key that owns its run once approved, the grant and arguments to run. */
export type ApprovalStateAnswer = z.output<typeof approvalStateSchema>;
/** An approve or deny answer. */
export type ApprovalAnswer = z.output<typeof approvalAnswerSchema>;
/** A consumed grant. */
export type ConsumedGrant = z.output<typeof consumedGrantSchema>;
/** The verifier's report on a bundle. */
export type VerifyReport = z.output<typeof verifyReportSchema>;
/** An API key as listed (never its text or hash). */
export type ApiKeyInfo = z.output<typeof apiKeySchema>;
/** The server's health. */
export type Health = z.output<typeof healthSchema>;
/** A new API key as created: its row and, once, its text. */
export type NewApiKey = z.output<typeof createdApiKeySchema>;
/** What a policy reload did. */
export type PolicyReloadAnswer = z.output<typeof policyReloadSchema>;
/** Whether the server takes traffic. */
export type Readiness = z.output<typeof readySchema>;
