import { CallgateError, type ErrorKind, type Outcome } from '@callgate/protocol';
import { fastCanonicalJson } from '../json/canonical.js';
import { recordable } from '../json/normalize.js';
import { readArguments } from '../json/safe-json.js';
import { argumentsDigest } from '../ledger/arguments-key.js';
import { commitValue, type GateContext } from './context.js';
import { type CallStanding, outcomeContradiction } from './outcome-table.js';
import { recordRefusal } from './refusals.js';
import { attemptKey, type RunState } from './run-state.js';

/** How a call ended, as reported by whoever ran it (or refused it). */
export interface CallOutcomeReport {
  call_id: string;
  /** Defaults to the call's latest attempt. */
  attempt?: number;
  /** `ok` or `error` for a call that ran; `denied` for one refused. */
  outcome: Outcome;
  /** The tool's result (or the refusal body); committed, never stored in the ledger. */
  result?: unknown;
  error_kind?: ErrorKind;
  /** The tool name and arguments the call actually ran with: a mismatch with the decision is recorded as `changed-after-decision`. */
  tool?: string;
  arguments?: unknown;
  duration_ms?: number;
  grant_consumed?: boolean;
}

/**
 * Records a call's outcome (`call-end`), feeds provenance with an untrusted tool's result and
 * marks an idempotency key as done. Returns the outcome recorded, which is
 * `changed-after-decision` when the tool or arguments that ran differ from those decided.
 *
 * A result with no canonical JSON form is committed as a `callgate-normalize/1` marker and the
 * record says so (`result_normalized`). An outcome claiming `grant_consumed` is accepted only when
 * the gate consumed that call's grant (docs/ledger.md, invariant 2); a report claiming a grant the
 * gate did not consume is recorded as a `refusal` (`outcome-contradicts-grant`, invariant 3)
 * whichever check refuses it: a claim for a call that already ended, was refused or waits on an
 * approval leaves the same evidence as one for a call whose grant was never consumed. A second
 * `denied` for a call already ended `denied` (e.g. by its failed consume) is the same fact and
 * returns `denied`.
 *
 * Every report is held to the table of outcome-table.ts (which outcome and error kind a call
 * allowed, denied by a person, left unanswered or refused may end with): one outside it, e.g.
 * `denied` with `policy-denied` for a call the policy allowed, is refused `conflict` and recorded
 * as a `refusal` (`outcome-contradicts-grant`, the reason naming the contradiction).
 *
 * @throws CallgateError `not-found` when the call was never decided in this run, `conflict` when
 *   its outcome is already recorded, it was refused, or its approval is not approved (for a
 *   report saying it ran), or the report is outside the outcome table, `grant-invalid` when the
 *   outcome claims a grant the gate did not consume for this call.
 */
export async function recordOutcome(
  context: GateContext,
  state: RunState,
  report: CallOutcomeReport,
): Promise<Outcome> {
  const begun = await beginOutcome(context, state, report);
  await begun.written;
  return begun.outcome;
}

/** An outcome checked and queued: what will be recorded, and the promise of its writes. */
export interface BegunOutcome {
  outcome: Outcome;
  /**
   * Resolves once the outcome's records are durable (the store's commit of the turn that queued
   * them); rejects when they could not be written. Always awaited by whoever began it.
   */
  written: Promise<void>;
}

/**
 * {@link recordOutcome} in two halves: checks the report (the same checks, the same errors; a
 * contradicted grant claim is recorded as a `refusal` and awaited here), then marks the call
 * ended in the run's state and queues its writes in the same synchronous stretch, without
 * waiting for them. Writes queued by the caller right after (a step's decisions) join the same
 * commit, after these records, so a step with the previous step's outcomes costs one durable
 * write. Once this resolves, a second report for the call is a `conflict`.
 */
export async function beginOutcome(
  context: GateContext,
  state: RunState,
  report: CallOutcomeReport,
): Promise<BegunOutcome> {
  const call = await state.attempt(report.call_id, report.attempt);
  if (!call) {
    throw new CallgateError(
      'not-found',
      `call ${report.call_id} was not decided in run ${state.run.run_id}`,
      {
        call_id: report.call_id,
      },
    );
  }
  if (call.outcome === 'denied' && report.outcome === 'denied')
    return { outcome: 'denied', written: Promise.resolve() };
  const key = attemptKey(call.call_id, call.attempt);
  // Whether the gate consumed this attempt's grant: here, or in another process sharing the
  // store (a replica, or before a restart).
  const consumedByGate = async () =>
    state.consumed.has(key) ||
    state.inherited.has(key) ||
    (await context.store.grantConsumed({
      run_id: state.run.run_id,
      call_id: call.call_id,
      tool: call.tool,
      arguments_digest: call.arguments_digest ?? '',
    }));
  // An outcome claiming a grant the gate did not consume is evidence (invariant 3), whichever
  // check refuses it: the refusal record is written before the error is thrown. A call already
  // ended `denied` did not run under its grant, whatever the store says of the grant (a refused
  // consume spends it too).
  // `contradictsDecision`: the report says the call ran though its decision did not let it (the
  // outcome table's refusal): recorded whatever it claims of a grant.
  const refuse = async (
    error: CallgateError,
    reason = error.message,
    contradictsDecision = false,
  ): Promise<never> => {
    if (
      contradictsDecision ||
      (report.grant_consumed && (call.outcome === 'denied' || !(await consumedByGate())))
    )
      await recordRefusal(context, state, {
        kind: 'outcome-contradicts-grant',
        call_id: call.call_id,
        tool: call.tool,
        reason,
      });
    throw error;
  };
  if (call.outcome !== undefined) {
    await refuse(
      new CallgateError('conflict', `call ${report.call_id} already ended (${call.outcome})`, {
        call_id: report.call_id,
      }),
    );
  }
  const ran = report.outcome !== 'denied' && report.outcome !== 'decided-not-completed';
  if (ran && (call.decision === 'deny' || call.decision === 'refused')) {
    await refuse(
      new CallgateError(
        'conflict',
        `call ${report.call_id} was refused: it cannot have run; record its outcome as denied`,
        { call_id: report.call_id },
      ),
      undefined,
      true,
    );
  }
  if (ran && call.decision === 'ask') {
    const approval = call.approval_id ? await context.store.getApproval(call.approval_id) : undefined;
    if (approval?.status !== 'approved') {
      await refuse(
        new CallgateError('conflict', approvalNotGiven(report.call_id, call.approval_id, approval?.status), {
          call_id: report.call_id,
          ...(call.approval_id ? { approval_id: call.approval_id } : {}),
        }),
        undefined,
        true,
      );
    }
  }
  if (report.grant_consumed) {
    const reason = `the outcome of call ${call.call_id} claims its grant was consumed, but the gate consumed none for it`;
    if (!(await consumedByGate()))
      await refuse(new CallgateError('grant-invalid', reason, { call_id: call.call_id }), reason);
  }
  // The table of what an outcome may claim (outcome-table.ts): a contradiction is refused and
  // recorded as evidence, as a contradicted grant claim is.
  const approvalStatus =
    call.decision === 'ask' && call.approval_id
      ? (await context.store.getApproval(call.approval_id))?.status
      : undefined;
  const standing: CallStanding =
    call.decision === 'allow' || (call.decision === 'ask' && approvalStatus === 'approved')
      ? 'allowed'
      : call.decision === 'ask'
        ? approvalStatus === 'denied'
          ? 'approval-denied'
          : 'approval-unanswered'
        : 'refused';
  const contradiction = outcomeContradiction(
    standing,
    report.outcome,
    report.error_kind,
    state.refusalKinds.get(key),
  );
  if (contradiction !== undefined) {
    const reason = `the outcome of call ${call.call_id} contradicts its decision: ${contradiction}`;
    await recordRefusal(context, state, {
      kind: 'outcome-contradicts-grant',
      call_id: call.call_id,
      tool: call.tool,
      reason,
    });
    throw new CallgateError('conflict', reason, { call_id: call.call_id });
  }
  let outcome = report.outcome;
  let digest = call.arguments_digest;
  if (report.arguments !== undefined || (report.tool !== undefined && report.tool !== call.tool)) {
    let ranDigest: string | null = null;
    try {
      if (report.arguments !== undefined)
        ranDigest = argumentsDigest(fastCanonicalJson(readArguments(report.arguments, context.jsonLimits)));
    } catch {
      ranDigest = null;
    }
    const changedTool = report.tool !== undefined && report.tool !== call.tool;
    const changedArguments = report.arguments !== undefined && ranDigest !== call.arguments_digest;
    if ((changedTool || changedArguments) && (outcome === 'ok' || outcome === 'error')) {
      outcome = 'changed-after-decision';
      if (changedArguments) digest = ranDigest;
    }
  }
  const now = context.clock();
  call.outcome = outcome;
  call.ended_at = now;
  const writes: Promise<unknown>[] = [];
  const result = report.result === undefined ? undefined : recordable(report.result);
  const resultCommitment = result === undefined ? null : commitValue(context, result.value, writes);
  const errorKind: ErrorKind | undefined =
    report.error_kind ??
    (outcome === 'error' ? 'tool-error' : outcome === 'changed-after-decision' ? 'grant-invalid' : undefined);
  writes.push(
    context.ledger.append(state.run.run_id, {
      type: 'call-end',
      call_id: call.call_id,
      attempt: call.attempt,
      tool: call.tool,
      outcome,
      arguments_digest: digest,
      result_commitment: resultCommitment,
      ...(result && result.reasons.length > 0 ? { result_normalized: result.reasons } : {}),
      ...(errorKind ? { error_kind: errorKind } : {}),
      ...(report.duration_ms !== undefined ? { duration_ms: report.duration_ms } : {}),
      grant_consumed: report.grant_consumed ?? false,
    }),
    context.store.putCall(call),
  );
  if (outcome === 'ok') {
    const registered = context.registry.get(call.tool);
    const untrusted = registered?.spec.trust === 'untrusted' || context.policy().isUntrusted(call.tool);
    if (untrusted && result !== undefined) state.provenance.observe(call.tool, result.value);
    if (call.idempotency_key !== undefined) {
      writes.push(context.store.putIdempotencyKey(call.tool, call.idempotency_key, call.call_id));
    }
  }
  // Once the end and the row that says so are durable, the row may leave memory (the store
  // answers for it from then on); until then it stays, so a second report sees the call ended.
  const written = Promise.all(writes).then(() => state.ended(call));
  // Awaited by the caller, possibly after other work: never an unhandled rejection meanwhile.
  written.catch(() => undefined);
  return { outcome, written };
}

/**
 * Gives every call of the run whose outcome never arrived its one `call-end` (invariant 1):
 * `decided-not-completed` for a call allowed or approved, `denied` for one refused (a caller over
 * the HTTP API may never report the outcome of a refused call) or whose approval was not given.
 * Returns how many were recorded.
 */
export async function closeOpenCalls(context: GateContext, state: RunState): Promise<number> {
  // Queued, then awaited together: the run's open calls share a commit (an approval read between
  // them commits what was queued before it).
  const written: Promise<void>[] = [];
  try {
    for (const call of [...state.heldAttempts()]) {
      if (call.outcome !== undefined) continue;
      if (call.decision === 'deny' || call.decision === 'refused') {
        // The refusal's own kind is on its call-decision record; `policy-denied` is the one a
        // deny decision implies.
        const report: CallOutcomeReport = {
          call_id: call.call_id,
          attempt: call.attempt,
          outcome: 'denied',
          ...(call.decision === 'deny' ? { error_kind: 'policy-denied' as const } : {}),
        };
        written.push((await beginOutcome(context, state, report)).written);
        continue;
      }
      const approval = call.approval_id ? await context.store.getApproval(call.approval_id) : undefined;
      const report: CallOutcomeReport =
        approval && approval.status !== 'approved'
          ? {
              call_id: call.call_id,
              attempt: call.attempt,
              outcome: 'denied',
              error_kind:
                approval.status === 'denied'
                  ? 'approval-denied'
                  : approval.status === 'pending'
                    ? 'approval-pending'
                    : 'approval-expired',
            }
          : { call_id: call.call_id, attempt: call.attempt, outcome: 'decided-not-completed' };
      written.push((await beginOutcome(context, state, report)).written);
    }
  } finally {
    await Promise.allSettled(written);
  }
  await Promise.all(written);
  return written.length;
}

/**
 * Why a call whose approval is not `approved` cannot have run, in the approval's own terms: one
 * still pending waits; one denied, expired or withdrawn ended without letting the call run.
 */
function approvalNotGiven(
  callId: string,
  approvalId: string | null | undefined,
  status: string | undefined,
): string {
  const approval = `approval ${approvalId ?? '(none)'}`;
  if (status === 'pending' || status === undefined)
    return `call ${callId} waits on ${approval} (${status ?? 'unknown'}): it may run only once approved`;
  return `call ${callId} cannot have run: its ${approval} was ${status}, so it may not run; record its outcome as denied`;
}
