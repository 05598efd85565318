// The HTTP API's request and response shapes. The routes validate with these schemas and the
// OpenAPI document is generated from them, so the two cannot disagree. Request objects are
// strict: an unknown field is a 400 naming it.
import {
  approvalSchema,
  approvalStatusSchema,
  decisionSchema,
  digestSchema,
  errorBodySchema,
  errorKindSchema,
  grantSchema,
  outcomeSchema,
  toolSpecSchema,
} from '@callgate/protocol';
import { z } from 'zod';

export const API_KEY_ROLES = ['agent', 'reviewer', 'admin'] as const;
/** What a key may do: `agent` decides and records, `reviewer` answers approvals and reads, `admin` does all. */
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/**
 * A query flag: bare (`?strict`, which arrives as an empty value) or `=true` turns it on,
 * `=false` off. Read it with {@link flagOn}.
 */
const flag = z
  .enum(['', 'true', 'false'])
  .describe('A flag: `?name` or `?name=true` turns it on, `?name=false` off.');

/** True when a {@link flag} query parameter was given and is not `false`. */
export function flagOn(value: '' | 'true' | 'false' | undefined): boolean {
  return value !== undefined && value !== 'false';
}

const limit = z.coerce.number().int().min(1).max(1000);

// --- requests -------------------------------------------------------------------------------

export const startRunBody = z.strictObject({
  framework: z.string().min(1).max(200),
  principal: z.string().min(1).max(200).optional(),
  labels: z.record(z.string().max(200), z.string().max(2000)).optional(),
  parent_run_id: z.string().min(1).max(200).optional(),
});

export const listRunsQuery = z.strictObject({
  limit: limit.optional(),
  /** Epoch ms: runs started strictly before. */
  before: z.coerce.number().int().optional(),
});

export const endRunBody = z.strictObject({
  status: z.enum(['completed', 'failed', 'cancelled']).optional(),
  /** Outcomes not sent yet (same shape as `POST /runs/:id/outcomes`), recorded in order before the run ends. */
  get outcomes() {
    return outcomesList.optional();
  },
});

/** An outage a client saw under fail mode `open`: epoch ms bounds and how many calls ran undecided. */
export const gapBody = z
  .strictObject({
    reason: z.string().min(1).max(1000),
    from_ts: z.number().int().min(0),
    to_ts: z.number().int().min(0),
    calls: z.number().int().min(0),
  })
  .refine((gap) => gap.to_ts >= gap.from_ts, {
    message: 'to_ts must not be before from_ts',
    path: ['to_ts'],
  });

export const messageBody = z.strictObject({
  role: z.string().min(1).max(64),
  content: z.unknown().optional(),
});

export const callBody = z.strictObject({
  id: z.string().max(256).nullable().optional(),
  tool: z.string().max(256),
  /** An object, or a JSON string of one (as chat APIs deliver it); absent means no arguments. */
  arguments: z.unknown().optional(),
  /** Values the framework adds before the call runs, by name (`ToolCall.injected`; the gate checks them). */
  injected: z.unknown().optional(),
  /** Consume this call's grant with its decision when allowed (overrides the body's `consume`). */
  consume: z.boolean().optional(),
});

export const decisionsBody = z.strictObject({
  calls: z.array(callBody).max(256),
  message: messageBody.optional(),
  /** Specs of tools the server does not know yet; a known name must come with the same spec. */
  tools: z.array(toolSpecSchema.strict()).max(256).optional(),
  /**
   * Consume each allowed call's grant in the decision's own transaction (the caller runs the
   * tools itself, right after): the verdicts say `grant_consumed: true` and no consume request
   * follows. A call's own `consume` overrides it.
   */
  consume: z.boolean().optional(),
  /**
   * The previous step's outcomes (same shape as `POST /runs/:id/outcomes`), recorded in order
   * before the calls are decided; the answer lists what became of each.
   */
  get outcomes() {
    return outcomesList.optional();
  },
});

export const outcomeBody = z.strictObject({
  call_id: z.string().min(1).max(256),
  attempt: z.number().int().min(1).optional(),
  outcome: outcomeSchema,
  result: z.unknown().optional(),
  error_kind: errorKindSchema.optional(),
  tool: z.string().max(256).optional(),
  arguments: z.unknown().optional(),
  duration_ms: z.number().min(0).optional(),
  grant_consumed: z.boolean().optional(),
});

/** Several outcomes of one run, recorded in order. */
export const outcomesList = z.array(outcomeBody).max(1024);

/** `POST /runs/:id/outcomes` takes one outcome, or `{ outcomes: [...] }` to record several in order. */
export const outcomesBody = z.union([outcomeBody, z.strictObject({ outcomes: outcomesList })]);

export const listApprovalsQuery = z.strictObject({
  status: approvalStatusSchema.optional(),
  run_id: z.string().optional(),
  limit: limit.optional(),
});

export const getApprovalQuery = z.strictObject({
  /** Seconds to wait for a pending approval to be answered (long-poll), 0 to 60. */
  wait: z.coerce.number().min(0).max(60).optional(),
});

export const approveBody = z.strictObject({
  reason: z.string().max(2000).optional(),
  /** Edited arguments; counts as a denial unless the policy allows edits. */
  arguments: z.record(z.string(), z.unknown()).optional(),
});

export const denyBody = z.strictObject({
  reason: z.string().max(2000).optional(),
});

export const withdrawBody = z.strictObject({
  reason: z.string().max(2000).optional(),
});

export const consumeGrantBody = z
  .strictObject({
    token: z.string().min(1).max(512),
    run_id: z.string().min(1),
    call_id: z.string().min(1),
    tool: z.string().min(1),
    /** The arguments the tool will run with (their digest must match the grant's). */
    arguments: z.unknown().optional(),
    arguments_digest: digestSchema.optional(),
  })
  .refine((body) => (body.arguments === undefined) !== (body.arguments_digest === undefined), {
    message: 'send exactly one of arguments and arguments_digest',
    path: ['arguments'],
  });

export const bundleQuery = z.strictObject({
  openings: flag.optional(),
  /** One inclusion proof per record (`callgate-bundle/1`) instead of one batch proof and a signed manifest (`callgate-bundle/3`). */
  proofs: flag.optional(),
  /** Reveal the run's key (`run_keys`), so the keyed arguments digests can be checked (implied by `openings`). */
  reveal_run_keys: flag.optional(),
});

export const verifyQuery = z.strictObject({
  strict: flag.optional(),
  expect_size: z.coerce.number().int().min(0).optional(),
  /** A verifier key to pin instead of this server's own. */
  public_key: z.string().optional(),
});

export const keyName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/, 'names use letters, digits, _ . @ - (at most 64)');

export const createKeyBody = z.strictObject({
  role: z.enum(API_KEY_ROLES),
  name: keyName.optional(),
});

// --- responses ------------------------------------------------------------------------------

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
