import { type CallgateError, isCallgateError, type Outcome } from '@callgate/protocol';
import type { GateContext } from './context.js';
import { beginOutcome, type CallOutcomeReport } from './outcomes.js';
import type { RunState } from './run-state.js';

/** What became of one outcome a step carried: recorded as `outcome`, or refused with `error`. */
export type StepOutcome = { call_id: string; outcome: Outcome } | { call_id: string; error: CallgateError };

/** The kinds an outcome is refused with for what it says (the caller's mistake), not a failure to record it. */
const REFUSED_FOR_ITS_CONTENT: ReadonlySet<string> = new Set(['not-found', 'conflict', 'grant-invalid']);

/**
 * Checks and queues `reports` (outcomes of run `state`'s earlier calls) in order, each with every
 * check a single outcome gets ({@link beginOutcome}), and returns what became of each, in order,
 * with the promise of all their writes. A report refused for its content (`not-found`: never
 * decided, `conflict`: already ended or refused, `grant-invalid`: claims a grant the gate did not
 * consume) is listed with its error and stops nothing; a report naming a call an earlier report
 * ended is a `conflict`, so a call never gets two `call-end` records. The writes are queued, not
 * awaited: whoever queues more writes in the same synchronous stretch (the step's decisions)
 * shares their commit.
 *
 * @throws whatever else a report's checks threw (the store or the ledger failed), once the writes
 *   already queued have settled: nothing more of the step may happen.
 */
export async function beginOutcomes(
  context: GateContext,
  state: RunState,
  reports: readonly CallOutcomeReport[],
): Promise<{ settled: StepOutcome[]; written: Promise<void> }> {
  const settled: StepOutcome[] = [];
  const writes: Promise<void>[] = [];
  for (const report of reports) {
    try {
      const begun = await beginOutcome(context, state, report);
      writes.push(begun.written);
      settled.push({ call_id: report.call_id, outcome: begun.outcome });
    } catch (error) {
      if (!isCallgateError(error) || !REFUSED_FOR_ITS_CONTENT.has(error.kind)) {
        await Promise.allSettled(writes);
        throw error;
      }
      settled.push({ call_id: report.call_id, error });
    }
  }
  const written = Promise.all(writes).then(() => undefined);
  written.catch(() => undefined);
  return { settled, written };
}
