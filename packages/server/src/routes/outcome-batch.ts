import type { Engine, Logger } from '@callgate/core';
import type { Outcome } from '@callgate/protocol';
import type { z } from 'zod';
import { errorResponseOf } from '../http/errors.js';
import type { outcomeBody, outcomeResultSchema } from '../http/schemas.js';

/** What became of one outcome of a batch. */
export type OutcomeResult = z.infer<typeof outcomeResultSchema>;

/**
 * Records `reports` of one run in order, each with `engine.recordOutcome` (so each gets every
 * check a single outcome gets), and says what became of each: `{ call_id, outcome }` when it
 * was recorded, `{ call_id, error: { kind, message } }` when it was refused (e.g. `conflict`:
 * the call already ended). One refused outcome does not stop the others: each is its own call.
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
  for (const report of reports) {
    try {
      const outcome: Outcome = await engine.recordOutcome(runId, report);
      results.push({ call_id: report.call_id, outcome });
    } catch (error) {
      const { status, body } = errorResponseOf(error, logger);
      if (status >= 500) throw error;
      results.push({ call_id: report.call_id, error: body.error });
    }
  }
  return results;
}
