// Where callgate keeps its state in an Agents SDK run: under `callgate` in the run context's
// `context` object, which the SDK serialises with a RunState. So a run resumed from
// `RunState.fromString` (in this process or another) continues the same callgate run, and each
// pending call stays bound to the approval callgate made for it.
import { CallgateError } from '@callgate/protocol';

/** What callgate keeps in an Agents SDK run context: JSON, serialised with the RunState. */
export interface CallgateRunContext {
  /** The callgate run. */
  run_id: string;
  /** The approval callgate made for each call waiting on a person, by call id. */
  approvals: Record<string, string>;
  /**
   * Calls of agents used as tools whose inner run stopped at an interruption, by call id: they
   * started (their grant is consumed) and end when the inner run resumes and finishes.
   */
  suspended?: Record<string, SuspendedCall>;
  /** What the model reads of each call callgate refused (`{"error": {...}}`), by call id. */
  refused?: Record<string, string>;
  /** Who the run acts for, as begun (the runs of agents used as tools act for the same). */
  principal?: string;
  /**
   * The callgate run of each agent used as a tool whose inner run has not finished, by the
   * outer call's id: a child run (`parent_run_id`) whose run-start names the outer call.
   */
  children?: Record<string, string>;
  /** The run of each waiting call that is not in `run_id` (a call of an inner agent), by call id. */
  approvalRuns?: Record<string, string>;
}

/** A started call of an agent used as a tool, waiting for its inner run to resume. */
export interface SuspendedCall {
  call_id: string;
  attempt?: number;
  tool: string;
}

/** A context object carrying callgate's state. */
export type WithCallgate<T extends object = Record<string, unknown>> = T & { callgate: CallgateRunContext };

function isRunContext(value: unknown): value is CallgateRunContext {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CallgateRunContext).run_id === 'string' &&
    typeof (value as CallgateRunContext).approvals === 'object'
  );
}

/**
 * callgate's state in a run context's `context`.
 * @throws CallgateError `gate-unavailable` when the context carries none: the run was not begun
 *   with `gate.begin()`, so no call may run (fail closed).
 */
export function callgateOf(context: unknown): CallgateRunContext {
  const state = (context as { callgate?: unknown } | null | undefined)?.callgate;
  if (!isRunContext(state)) {
    throw new CallgateError(
      'gate-unavailable',
      'this agent run carries no callgate run: pass the context returned by gate.begin() to run()',
    );
  }
  return state;
}
