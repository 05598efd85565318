// Refused attempts as evidence (docs/ledger.md, invariant 3): each is a `refusal` record of the run
// it was aimed at, at most MAX_REFUSALS_PER_RUN per run so that nobody can flood the log.
import type { ApprovalResponse, REFUSAL_KINDS } from '@callgate/protocol';
import type { GateContext } from './context.js';
import type { RunState } from './run-state.js';

/** Most `refusal` records one run holds; the last one written says later ones are not recorded. */
export const MAX_REFUSALS_PER_RUN = 100;

/** One refused attempt. */
export interface RefusedAttempt {
  kind: (typeof REFUSAL_KINDS)[number];
  /** Who tried (an API key's or reviewer's name), when known. */
  actor?: string | null | undefined;
  call_id?: string | null | undefined;
  approval_id?: string | null | undefined;
  tool?: string | null | undefined;
  /** What the gate said (the refusal's message). */
  reason: string;
}

/**
 * Writes a `refusal` record to the run's chain unless the run already holds
 * {@link MAX_REFUSALS_PER_RUN}: the one that reaches the limit carries `suppressed: true`, later
 * ones are only logged. Never throws: a refusal that cannot be recorded is logged, and the
 * refusal itself still stands.
 */
export async function recordRefusal(
  context: GateContext,
  state: RunState,
  attempt: RefusedAttempt,
): Promise<void> {
  state.refusals++;
  if (state.refusals > MAX_REFUSALS_PER_RUN) {
    context.logger.warn(
      { run_id: state.run.run_id, kind: attempt.kind, reason: attempt.reason },
      'refused attempt not recorded: the run reached its limit of refusal records',
    );
    return;
  }
  try {
    await context.ledger.append(state.run.run_id, {
      type: 'refusal',
      kind: attempt.kind,
      actor: attempt.actor ?? null,
      call_id: attempt.call_id ?? null,
      approval_id: attempt.approval_id ?? null,
      tool: attempt.tool ?? null,
      reason: attempt.reason,
      ...(state.refusals === MAX_REFUSALS_PER_RUN ? { suppressed: true } : {}),
    });
  } catch (error) {
    context.logger.error(
      { run_id: state.run.run_id, kind: attempt.kind, error: String(error) },
      'a refused attempt could not be recorded',
    );
  }
}

/**
 * Records an answer to an approval that is no longer pending (late, or a second answer) as a
 * `refusal` (`approval-not-pending`, the reviewer as actor) in the approval's run, if it is open.
 */
export async function recordLateAnswer(
  context: GateContext,
  openRun: (runId: string) => Promise<RunState | undefined>,
  approvalId: string,
  response: ApprovalResponse,
  error: Error,
): Promise<void> {
  const approval = await context.store.getApproval(approvalId);
  const state = approval ? await openRun(approval.run_id) : undefined;
  if (!approval || !state) return;
  await recordRefusal(context, state, {
    kind: 'approval-not-pending',
    actor: typeof response?.reviewer === 'string' ? response.reviewer : null,
    call_id: approval.call_id,
    approval_id: approval.id,
    tool: approval.tool,
    reason: error.message,
  });
}
