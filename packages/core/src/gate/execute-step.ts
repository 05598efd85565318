import { type ErrorBody, type ErrorKind, isCallgateError, type ToolCall } from '@callgate/protocol';
import type { ApprovalState } from './approvals.js';
import type { CallVerdict, ModelMessage } from './decide.js';
import { bindingOf, type Engine } from './engine.js';

/** A call cleared to run, as the executor receives it. */
export interface ExecutableCall {
  run_id: string;
  call_id: string;
  attempt: number;
  tool: string;
  /** Parsed, validated, scrubbed (and, where the policy allows edits, reviewer-edited) arguments. */
  arguments: Record<string, unknown>;
  /** Aborts when the step is cancelled. */
  signal: AbortSignal;
}

/** Runs one tool. What it returns is the call's result; what it throws is a `tool-error`. */
export type ToolExecutor = (call: ExecutableCall) => Promise<unknown> | unknown;

/** The result of one call of a step: what the model reads as that call's tool result. */
export type StepResult =
  | { call_id: string; minted: boolean; tool: string; ok: true; result: unknown; verdict: CallVerdict }
  | {
      call_id: string;
      minted: boolean;
      tool: string;
      ok: false;
      error: ErrorBody['error'];
      verdict: CallVerdict;
    };

/** Options of {@link executeStep}. */
export interface ExecuteStepOptions {
  message?: ModelMessage;
  /** Cancels waiting approvals (they are withdrawn) and is passed to the tools. */
  signal?: AbortSignal;
  /** Longest wait for approvals, in ms; default the policy's wait limit. */
  approvalWaitMs?: number;
}

const refusalKind: Record<string, ErrorKind> = {
  denied: 'approval-denied',
  expired: 'approval-expired',
  withdrawn: 'approval-expired',
  pending: 'approval-pending',
};

async function awaitApproval(
  engine: Engine,
  verdict: CallVerdict,
  waitMs: number,
  signal: AbortSignal | undefined,
): Promise<ApprovalState> {
  const id = verdict.approval?.id as string;
  const state = await engine.approval(id, { waitMs, ...(signal ? { signal } : {}) });
  if (state.approval.status !== 'pending') return state;
  const reason = signal?.aborted ? 'the step was cancelled' : 'the caller stopped waiting';
  return (await engine.withdrawApproval(id, reason)) ?? (await engine.approval(id));
}

/**
 * Runs a whole step through the gate: decides every call before any runs, waits for the
 * approvals the step needs (in parallel), runs the allowed and approved calls (in parallel,
 * approved ones only by consuming their grant), records every outcome, and returns one result
 * per call in the order given. A refused call never runs; its result is
 * `{"error": {"kind", "message", ...}}` and the run goes on.
 */
export async function executeStep(
  engine: Engine,
  runId: string,
  calls: readonly ToolCall[],
  execute: ToolExecutor,
  options: ExecuteStepOptions = {},
): Promise<StepResult[]> {
  const verdicts = await engine.decide(runId, calls, options.message ? { message: options.message } : {});
  const waitMs = options.approvalWaitMs ?? engine.policy.approval.waitMs;
  const signal = options.signal ?? new AbortController().signal;

  return Promise.all(
    verdicts.map(async (verdict): Promise<StepResult> => {
      const base = { call_id: verdict.call_id, minted: verdict.minted, tool: verdict.tool, verdict };
      const refuse = async (error: ErrorBody['error']): Promise<StepResult> => {
        await engine.recordOutcome(runId, {
          call_id: verdict.call_id,
          attempt: verdict.attempt,
          outcome: 'denied',
          result: { error },
          error_kind: error.kind,
        });
        return { ...base, ok: false, error };
      };
      if (verdict.status === 'refused') {
        return refuse(verdict.error ?? { kind: 'internal', message: 'refused' });
      }
      let args = verdict.arguments ?? {};
      let grantConsumed = false;
      if (verdict.status === 'pending') {
        const state = await awaitApproval(engine, verdict, waitMs, options.signal);
        const approval = state.approval;
        if (approval.status !== 'approved' || !state.grant) {
          const kind = refusalKind[approval.status] ?? 'approval-denied';
          const why = approval.response_reason ? `: ${approval.response_reason}` : '';
          return refuse({
            kind,
            message: `approval ${approval.id} was ${approval.status}${why}`,
            approval_id: approval.id,
          });
        }
        args = state.arguments ?? args;
        try {
          await engine.consumeGrant(state.grant.token, {
            ...bindingOf(runId, verdict),
            arguments_digest: state.grant.arguments_digest,
          });
          grantConsumed = true;
        } catch (error) {
          if (isCallgateError(error)) return refuse(error.toBody().error);
          throw error;
        }
      }
      const started = performance.now();
      try {
        const result = await execute({
          run_id: runId,
          call_id: verdict.call_id,
          attempt: verdict.attempt,
          tool: verdict.tool,
          arguments: structuredClone(args),
          signal,
        });
        await engine.recordOutcome(runId, {
          call_id: verdict.call_id,
          attempt: verdict.attempt,
          outcome: 'ok',
          result: result ?? null,
          duration_ms: performance.now() - started,
          grant_consumed: grantConsumed,
        });
        return { ...base, ok: true, result };
      } catch (thrown) {
        const error: ErrorBody['error'] = isCallgateError(thrown)
          ? thrown.toBody().error
          : { kind: 'tool-error', message: thrown instanceof Error ? thrown.message : String(thrown) };
        await engine.recordOutcome(runId, {
          call_id: verdict.call_id,
          attempt: verdict.attempt,
          outcome: 'error',
          result: { error },
          error_kind: error.kind,
          duration_ms: performance.now() - started,
          grant_consumed: grantConsumed,
        });
        return { ...base, ok: false, error };
      }
    }),
  );
}
