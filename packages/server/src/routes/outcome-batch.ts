import type { Engine, Logger, StepOutcome } from '@callgate/core';
import type { Outcome } from '@callgate/protocol';
import type { z } from 'zod';
import { errorResponseOf } from '../http/errors.js';
import type { outcomeBody, outcomeResultSchema } from '../http/schemas.js';

/** What became of one outcome of a batch. */
export type OutcomeResult = z.infer<typeof outcomeResultSchema>;

/**
 * Records `reports` of one run, each with `engine.recordOutcome` (so each gets every check a
 * single outcome gets), and says what became of each, in order: `{ call_id, outcome }` when it
 * was recorded, `{ call_id, error: { kind, message } }` when it was refused (e.g. `conflict`:
 * the call already ended). One refused outcome does not stop the others.
 *
 * Outcomes of distinct calls are started together, in the order given, so that their writes
 * share one commit (one fsync under `synchronous=FULL` instead of one per outcome); each is
 * appended in that order unless its checks read the store first (a call that waited on an
 * approval), which may put it after the others of its group. A call named again starts a new
 * group, after the previous one is recorded, so a call never gets two `call-end` records.
 * Everything is recorded before the function returns.
 *
 * @throws what `recordOutcome` threw when it is not the caller's fault (a 5xx: the store or the
 *   ledger failed): the request fails whole, and the caller sends the batch again (outcomes that
 *   were recorded then come back as `conflict`).
 */
export async function recordOutcomes(
  engine: Engine,
  runId: string,
  reports: readonly z.output<typeof outcomeBody>[],
  logger: Logger,
): Promise<OutcomeResult[]> {
  const results: OutcomeResult[] = [];
  let start = 0;
  while (start < reports.length) {
    const seen = new Set<string>();
    let end = start;
    while (end < reports.length && !seen.has((reports[end] as { call_id: string }).call_id)) {
      seen.add((reports[end] as { call_id: string }).call_id);
      end += 1;
    }
    const group = reports.slice(start, end);
    const settled = await Promise.allSettled(group.map((report) => engine.recordOutcome(runId, report)));
    settled.forEach((result, index) => {
      const callId = (group[index] as { call_id: string }).call_id;
      if (result.status === 'fulfilled') {
        results.push({ call_id: callId, outcome: result.value as Outcome });
        return;
      }
      const { status, body } = errorResponseOf(result.reason, logger);
      if (status >= 500) throw result.reason;
      results.push({ call_id: callId, error: body.error });
    });
    start = end;
  }
  return results;
}

/**
 * What became of each outcome a decisions request carried (`Engine.decideStep`), as the wire
 * says it: `{ call_id, outcome }` when recorded, `{ call_id, error: { kind, message } }` when
 * refused for what it said.
 */
export function stepOutcomeResults(outcomes: readonly StepOutcome[], logger: Logger): OutcomeResult[] {
  return outcomes.map((item) =>
    'error' in item
      ? { call_id: item.call_id, error: errorResponseOf(item.error, logger).body.error }
      : { call_id: item.call_id, outcome: item.outcome },
  );
}
