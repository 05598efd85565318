// Runs whose agent is gone (docs/ledger.md, invariant 1): nothing came for the idle limit, so the
// run is ended `abandoned`, its pending approvals withdrawn first.
import type { Approval } from '@callgate/protocol';
import type { RunState } from './run-state.js';

/** What ending an idle run needs of the engine. */
export interface IdleRunActions {
  pending(runId: string): Promise<Approval[]>;
  withdraw(approvalId: string, reason: string): Promise<unknown>;
  end(runId: string): Promise<unknown>;
}

/**
 * Ends each of `states` whose agent did nothing for `limitMs` (by `now`, epoch ms): withdraws its
 * pending approvals, then ends it. A run never touched by its agent in this process
 * (`lastActivity` 0) is left alone. Returns the run ids ended; none without a limit.
 */
export async function endIdleRuns(
  states: readonly RunState[],
  limitMs: number | undefined,
  now: number,
  actions: IdleRunActions,
): Promise<string[]> {
  if (limitMs === undefined) return [];
  const ended: string[] = [];
  for (const state of states) {
    if (state.lastActivity === 0 || now - state.lastActivity < limitMs) continue;
    const runId = state.run.run_id;
    for (const approval of await actions.pending(runId))
      await actions.withdraw(approval.id, `the run was abandoned: nothing came for ${limitMs} ms`);
    await actions.end(runId);
    ended.push(runId);
  }
  return ended;
}
