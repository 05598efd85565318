// Observers of ledger appends (metrics, traces): told of each append in the caller's turn, then of
// its durable record or its failure. Observing never changes what is recorded: an observer that
// throws is ignored.
import type { LedgerRecord, RecordBody } from '@callgate/protocol';

/** Resolves an append with the durable record and its digest (what the run's next `prev` holds). */
export type ResolveAppend = (record: LedgerRecord, digest: string) => void;

/**
 * Told of every append: called synchronously inside `append` (so in the caller's async context),
 * it may return a function that is called once, when the record is durable (with the record and
 * its `sha256:` digest) or when the append failed (with the error).
 */
export type AppendObserver = (
  runId: string,
  body: RecordBody,
) => ((outcome: { record: LedgerRecord; digest: string } | { error: unknown }) => void) | undefined;

type AppendOutcome = Parameters<NonNullable<ReturnType<AppendObserver>>>[0];

/**
 * Tells every observer of the append of `body` to `runId`, now; returns the functions that tell
 * them how it ended.
 */
export function tellObservers(
  observers: readonly AppendObserver[],
  runId: string,
  body: RecordBody,
): { resolve: ResolveAppend; reject: (error: unknown) => void } {
  const ends: NonNullable<ReturnType<AppendObserver>>[] = [];
  for (const observer of observers) {
    try {
      const end = observer(runId, body);
      if (end) ends.push(end);
    } catch {}
  }
  const tell = (outcome: AppendOutcome) => {
    for (const end of ends) {
      try {
        end(outcome);
      } catch {}
    }
  };
  return {
    resolve: (record, digest) => tell({ record, digest }),
    reject: (error) => tell({ error }),
  };
}
