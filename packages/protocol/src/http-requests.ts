// The HTTP API's request shapes (bodies and query strings under `/v1`). The server validates
// with these schemas, the OpenAPI document is generated from them and `@callgate/client`'s
// request types are inferred from them, so the three cannot disagree. Request objects are
// strict: an unknown field is refused, naming it.
import { z } from 'zod';
import { approvalStatusSchema } from './approval.js';
import { outcomeSchema } from './call.js';
import { errorKindSchema } from './errors.js';
import { digestSchema } from './ledger.js';
import { toolSpecSchema } from './tool.js';

export const API_KEY_ROLES = ['agent', 'reviewer', 'admin'] as const;

/** The shape of an API key: `cg_` and 32 random bytes in base64url (43 characters). */
export const API_KEY_PATTERN = /^cg_[A-Za-z0-9_-]{43}$/;
/** What a key may do: `agent` decides and records, `reviewer` answers approvals and reads, `admin` does all. */
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/**
 * A query flag: bare (`?strict`, which arrives as an empty value) or `=true` turns it on,
 * `=false` off (any other value is refused).
 */
export const queryFlag = z
  .enum(['', 'true', 'false'], { error: 'must be true or false (or given bare, ?name, for true)' })
  .describe('A flag: `?name` or `?name=true` turns it on, `?name=false` off.');

/**
 * A whole number in a query string, `minimum` to `maximum`, written in decimal digits only and
 * read exactly: `1e2`, `100.0`, ` 100`, `010`, `-0` and digits a double would round (`10.0000000000000001`,
 * past 2^53 − 1) are refused with `message`, never rounded to a number that was not sent.
 */
const wholeNumberQuery = (minimum: number, maximum: number, message: string) =>
  z
    .string()
    .regex(/^(?:0|[1-9][0-9]{0,15})$/, { error: message })
    .transform(Number)
    .pipe(
      z.number().int({ error: message }).min(minimum, { error: message }).max(maximum, { error: message }),
    );

/** A page size in a query string: a whole number 1..1000, refused with one message that says so. */
const LIMIT_MESSAGE = 'must be an integer 1..1000';
const limit = wholeNumberQuery(1, 1000, LIMIT_MESSAGE);

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
  before: wholeNumberQuery(
    0,
    Number.MAX_SAFE_INTEGER,
    'must be a time in epoch ms, a whole number in decimal digits, at most 9007199254740991',
  ).optional(),
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
  status: z
    .enum(approvalStatusSchema.options, {
      error: `must be one of ${approvalStatusSchema.options.join(', ')}`,
    })
    .optional(),
  run_id: z.string().optional(),
  limit: limit.optional(),
});

const WAIT_MESSAGE =
  'must be seconds 0 to 60 in decimal digits without a leading zero, at most 3 decimals (whole milliseconds; 1.5, not 1.00000000000000001 or 07)';

export const getApprovalQuery = z.strictObject({
  /** Seconds to wait for a pending approval to be answered (long-poll), 0 to 60. */
  wait: z
    .string()
    .regex(/^(?:0|[1-9]\d?)(?:\.\d{1,3})?$/, { error: WAIT_MESSAGE })
    .transform(Number)
    .pipe(z.number().min(0).max(60, { error: WAIT_MESSAGE }))
    .optional(),
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
  openings: queryFlag.optional(),
  /** One inclusion proof per record (`callgate-bundle/1`) instead of one batch proof and a signed manifest (`callgate-bundle/3`). */
  proofs: queryFlag.optional(),
  /** Reveal the run's key (`run_keys`), so the keyed arguments digests can be checked (implied by `openings`). */
  reveal_run_keys: queryFlag.optional(),
});

export const verifyQuery = z.strictObject({
  strict: queryFlag.optional(),
  expect_size: wholeNumberQuery(
    0,
    Number.MAX_SAFE_INTEGER,
    'must be a whole number of records in decimal digits, at most 9007199254740991',
  ).optional(),
  /**
   * A verifier key to pin instead of this server's own (C2SP signed-note `name+id+key`); the
   * server refuses one that does not parse as a key.
   */
  public_key: z.string().min(1, { error: 'must be a verifier key (name+id+key), not empty' }).optional(),
});

/** An API key's name. */
export const apiKeyNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/, 'names use letters, digits, _ . @ - (at most 64)');

export const createKeyBody = z.strictObject({
  role: z.enum(API_KEY_ROLES),
  name: apiKeyNameSchema.optional(),
});

export const reloadPolicyBody = z.strictObject({
  /** The policy YAML; without it the server reads its policy file again. */
  policy: z.string().max(1_048_576).optional(),
  /** What to call the policy in messages and the ledger (a file name). */
  source: z.string().min(1).max(200).optional(),
});

// --- inferred types (what a client sends) ---------------------------------------------------

/** What starts a run; `principal` defaults to the API key's name. */
export type RunStartRequest = z.input<typeof startRunBody>;
/** A tool call as the model asked for it (`arguments`: an object or JSON text of one). */
export type CallRequest = z.input<typeof callBody>;
/** A model message: its content is committed in the ledger, never stored there. */
export type MessageRequest = z.input<typeof messageBody>;
/** How a call ended, as reported by whoever ran it. */
export type OutcomeRequest = z.input<typeof outcomeBody>;
/** A step's calls to decide (`POST /v1/runs/{id}/decisions`). */
export type DecideRequest = z.input<typeof decisionsBody>;
/** How a run ends (`POST /v1/runs/{id}/end`). */
export type EndRunRequest = z.input<typeof endRunBody>;
/** An outage seen under fail mode `open` (`POST /v1/runs/{id}/gaps`). */
export type GapRequest = z.input<typeof gapBody>;
/**
 * A grant to consume, with the arguments the tool will run with or their digest: exactly one of
 * the two (the schema's refinement checks it; the type says it too).
 */
export type ConsumeGrantRequest = Omit<z.input<typeof consumeGrantBody>, 'arguments' | 'arguments_digest'> &
  (
    | { arguments: z.input<typeof consumeGrantBody>['arguments']; arguments_digest?: never }
    | {
        arguments_digest: NonNullable<z.input<typeof consumeGrantBody>['arguments_digest']>;
        arguments?: never;
      }
  );
/** What creates an API key. */
export type CreateKeyRequest = z.input<typeof createKeyBody>;
/** A policy to put in force (`POST /v1/admin/policy`). */
export type ReloadPolicyRequest = z.input<typeof reloadPolicyBody>;
