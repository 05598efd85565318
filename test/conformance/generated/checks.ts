// The checks made after each generated run, from outside (docs/ledger.md, "Invariants of the
// record"): one result per call in each next model request, one `call-end` per decided attempt
// and no side effect of a call that was not cleared, and a bundle that verifies `--strict` against
// the pinned key; and the counts a fuzz pass prints.
import { verifyBundle } from '@callgate/core/ledger';
import type { Bundle, LedgerRecord } from '@callgate/protocol';
import type { ArgumentForm, GeneratedCall } from './runs.js';

/** Argument forms holding a number a double does not hold: the gate must refuse them. */
const ROUNDED_BY_A_DOUBLE: ReadonlySet<ArgumentForm> = new Set(['huge-integer', 'inexact-decimal']);

/** What an integration observed of one run, to be checked from outside. */
export interface Observed {
  /** The calls as sent, step by step. */
  steps: GeneratedCall[][];
  /** What the next model request holds for each step: one result per call, in order. */
  results: Array<Array<{ call_id: string }>>;
  /** Side effects the tools performed, by `call_id` (each tool bumps its own counter). */
  sideEffects: Map<string, number>;
  bundle: Bundle;
  publicKey: string;
}

/** Counts of what the generated runs held, for the fuzz report. */
export class Tally {
  readonly #started = Date.now();
  /** Printed every `progressEvery` runs of a long (fuzz) pass, so a pass cut short still reports. */
  constructor(
    readonly name = 'generated runs',
    readonly progressEvery = process.env.CALLGATE_FUZZ_RUNS
      ? Number(process.env.CALLGATE_FUZZ_PROGRESS ?? 500)
      : 0,
  ) {}

  runs = 0;
  calls = 0;
  ran = 0;
  refused = 0;
  asks = 0;
  normalized = 0;
  refusals = 0;

  add(records: readonly LedgerRecord[]): void {
    this.runs++;
    for (const record of records) {
      if (record.type === 'call-decision') {
        this.calls++;
        if (record.error_kind !== undefined || record.effect === 'deny') this.refused++;
        if (record.effect === 'ask') this.asks++;
      } else if (record.type === 'call-end') {
        if (record.outcome === 'ok' || record.outcome === 'error') this.ran++;
        if (record.result_normalized) this.normalized++;
      } else if (record.type === 'refusal') this.refusals++;
    }
    if (this.progressEvery > 0 && this.runs % this.progressEvery === 0)
      process.stdout.write(`${this.name}: ${this}, ${((Date.now() - this.#started) / 1000).toFixed(0)} s\n`);
  }

  toString(): string {
    return `${this.runs} runs, ${this.calls} calls (${this.ran} ran, ${this.refused} refused, ${this.asks} asks), ${this.normalized} results normalised, ${this.refusals} refusal records`;
  }
}

/**
 * Checks the call records of a run (docs/ledger.md, invariants 1 and 2); throws an Error naming
 * the first violation:
 * - every decided call attempt has exactly one `call-end`; a refused one ends `denied`; a
 *   `grant_consumed` only on a call that ran; no call ran without being cleared (allowed, or
 *   asked and approved).
 * Returns, by call id, how many cleared executions the records allow: call-ends saying the call
 * ran (`ok`/`error`) or may have (`decided-not-completed` after being cleared).
 */
export function checkCallEnds(records: readonly LedgerRecord[]): Map<string, number> {
  const decisions = records.filter((record) => record.type === 'call-decision');
  const ends = records.filter((record) => record.type === 'call-end');
  const approved = new Set(
    records
      .filter((record) => record.type === 'approval-response' && record.status === 'approved')
      .map((record) => (record.type === 'approval-response' ? record.call_id : '')),
  );
  const fail = (message: string): never => {
    throw new Error(message);
  };
  const cleared = new Map<string, number>();
  for (const decision of decisions) {
    const key = `${decision.call_id}\u0000${decision.attempt}`;
    const matching = ends.filter(
      (end) => end.call_id === decision.call_id && end.attempt === decision.attempt,
    );
    if (matching.length !== 1) fail(`call ${key} has ${matching.length} call-ends`);
    const end = matching[0] as (typeof ends)[number];
    const refused = decision.error_kind !== undefined || decision.effect === 'deny';
    if (refused && end.type === 'call-end' && end.outcome !== 'denied')
      fail(`refused call ${decision.call_id} ended ${end.outcome}`);
    const ranEnd = end.type === 'call-end' && (end.outcome === 'ok' || end.outcome === 'error');
    if (end.type === 'call-end' && end.grant_consumed && !ranEnd)
      fail(`call ${decision.call_id} ended ${end.outcome} claiming its grant`);
    const isCleared = !refused && (decision.effect === 'allow' || approved.has(decision.call_id));
    if (ranEnd && !isCleared) fail(`call ${decision.call_id} ran without being cleared`);
    // A cleared call whose outcome never came (the agent hung or died) may have run: the record
    // says `decided-not-completed`, not that it did not run.
    const mayHaveRun =
      ranEnd || (isCleared && end.type === 'call-end' && end.outcome === 'decided-not-completed');
    if (mayHaveRun) cleared.set(decision.call_id, (cleared.get(decision.call_id) ?? 0) + 1);
  }
  return cleared;
}

/**
 * Checks one run from outside; throws an Error naming the first violation:
 * - one result per call in each step, whose call ids are the decisions' ids;
 * - the call records hold (see {@link checkCallEnds});
 * - a call whose arguments hold a number a double does not hold (an integer beyond ±(2^53−1), a
 *   decimal such as 1000.00000000000001) is refused (`tool-args-invalid`), never cleared on a
 *   rounded reading: counted when the run has one decision per call sent;
 * - no side effect of a call that was not cleared, and at most one per cleared call attempt;
 * - the bundle verifies `--strict` against the pinned key.
 */
export function checkRun(observed: Observed, tally?: Tally): void {
  const records = observed.bundle.records as LedgerRecord[];
  tally?.add(records);
  const fail = (message: string): never => {
    throw new Error(message);
  };
  for (let step = 0; step < observed.steps.length; step++) {
    const sent = observed.steps[step]?.length ?? 0;
    const got = observed.results[step]?.length ?? 0;
    if (got !== sent) fail(`step ${step}: ${sent} calls but ${got} results in the next model request`);
  }
  const cleared = checkCallEnds(records);
  const decisions = records.filter((record) => record.type === 'call-decision');
  const sent = observed.steps.flat();
  if (decisions.length === sent.length) {
    // Counted, not matched call by call: integrations decide a step's calls in their own order.
    const rounded = sent.filter((call) => call.tool !== 'unknown' && ROUNDED_BY_A_DOUBLE.has(call.arguments));
    const refused = decisions.filter(
      (record) => record.type === 'call-decision' && record.error_kind === 'tool-args-invalid',
    );
    if (refused.length < rounded.length)
      fail(
        `${rounded.length} calls held a number a double does not hold (${rounded.map((call) => call.arguments).join(', ')}) but only ${refused.length} were refused as tool-args-invalid`,
      );
  }
  for (const [callId, count] of observed.sideEffects) {
    const allowedRuns = cleared.get(callId) ?? 0;
    if (count > allowedRuns)
      fail(`call ${callId} had ${count} side effects but ${allowedRuns} cleared executions were recorded`);
  }
  const report = verifyBundle(JSON.parse(JSON.stringify(observed.bundle)), {
    publicKey: observed.publicKey,
    strict: true,
  });
  if (!report.ok) fail(`the bundle does not verify --strict: ${JSON.stringify(report.failures.slice(0, 3))}`);
}
