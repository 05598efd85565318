import { z } from 'zod';

/**
 * A tool call as the model asked for it. `id` is the model's call id (absent or empty when the
 * model gave none: callgate then mints `cg-<hex>`). `arguments` is an object, or a JSON string
 * of one (as many chat APIs deliver it). `injected`: values the framework adds to the model's
 * arguments before the tool runs (Haystack `inputs_from_state` / `State` parameters, an agent
 * framework's run context), by argument name; the arguments that run are `arguments` with these
 * set. The gate records a digest of them beside the model's (an `effective-arguments` record)
 * and shows them to the reviewer of an ask (`Approval.injected`).
 */
export const toolCallSchema = z.object({
  id: z.string().nullable().optional(),
  tool: z.string(),
  arguments: z.unknown(),
  /** An object (the gate refuses anything else as `tool-args-invalid`, path `injected`). */
  injected: z.unknown().optional(),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

export const EFFECTS = ['allow', 'deny', 'ask'] as const;
export const effectSchema = z.enum(EFFECTS);
/** A decision's effect. Folding is deny over ask over allow; no match is the policy default. */
export type Effect = z.infer<typeof effectSchema>;

/**
 * A decision on one call: its effect, the ids of the rules that matched (empty when the
 * default applied), a reason a person can read, and the sha256 digest of the policy in force.
 */
export const decisionSchema = z.object({
  effect: effectSchema,
  rules: z.array(z.string()),
  reason: z.string(),
  policy_digest: z.string(),
});
export type Decision = z.infer<typeof decisionSchema>;

export const OUTCOMES = ['ok', 'error', 'denied', 'decided-not-completed', 'changed-after-decision'] as const;
export const outcomeSchema = z.enum(OUTCOMES);
/** How a call ended. */
export type Outcome = z.infer<typeof outcomeSchema>;

/** A call as identified by the gate: its id (given or minted), attempt and arguments digest. */
export const identifiedCallSchema = z.object({
  call_id: z.string(),
  minted: z.boolean(),
  attempt: z.number().int().min(1),
  tool: z.string(),
  arguments_digest: z.string().optional(),
});
export type IdentifiedCall = z.infer<typeof identifiedCallSchema>;
