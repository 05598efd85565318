// Record-fidelity checks of the offline verifier (docs/ledger.md, invariant 8): each call attempt
// has at most one `call-end` (and, with --strict, an allowed or approved one has exactly one, and
// in a run that ended every one has exactly one, and each `call-end` is one the gate's outcome
// table allows for its decision: gate/outcome-table.ts), no
// call that did not run claims its grant, and an `effective-arguments` record follows its call's
// decision and names the arguments it decided (invariant 5).
import type { LedgerRecord } from '@callgate/protocol';
import { type CallStanding, outcomeContradiction } from '../../gate/outcome-table.js';
import { type AttemptMap, type AttemptState, CallAttempts } from './attempts.js';
import type { Findings } from './report.js';

/**
 * Fields of a `callgate-bundle/1` that no signature covers: the exporter's own claims. The
 * records, proofs and checkpoints are covered by the checkpoint signatures; `origin` and
 * `public_key` are checked against the signed notes and the pinned key; policies and openings
 * against the digests and commitments the records hold.
 */
export const UNSIGNED_BUNDLE_FIELDS = ['exported_at', 'synchronous'] as const;

/** How the gate stood on an attempt, from its records so far (see outcome-table.ts). */
function standingOf(state: AttemptState): CallStanding {
  if (state.effect === 'deny' || state.error_kind !== undefined) return 'refused';
  if (state.effect === 'allow' || state.reviewApproved) return 'allowed';
  return state.reviewDenied ? 'approval-denied' : 'approval-unanswered';
}

const RAN = new Set(['ok', 'error', 'changed-after-decision']);

/** `call <id> attempt <n>`, for messages (built only when one is reported). */
const attemptOf = (record: { call_id: string; attempt: number }): string =>
  `call ${record.call_id} attempt ${record.attempt}`;

/** One run's call attempts, by call and attempt (and each call's latest decision). */
interface RunAttempts {
  attempts: AttemptMap<AttemptState>;
  ended: boolean;
}

/**
 * The fidelity checks as records are read: `call-end` (two ends of one attempt; with `strict`, an
 * allowed or approved attempt with none, or any attempt with none in a run that ended) and
 * `grant` (a call that did not run claiming its grant), and `effective-arguments`. Give each
 * well-formed record, in log order, to {@link FidelityChecks.record}, then call
 * {@link FidelityChecks.finish} once. A consume the gate refused ends its open call `denied` there
 * and then, so an outcome claiming that call ran under its grant afterwards is a second
 * `call-end`. Per attempt it keeps the few fields compared, not the record.
 */
export class FidelityChecks {
  readonly #runs = new Map<string, RunAttempts>();
  // Each approval's attempt: an approval names its call but not the attempt, and one call id
  // given twice in a step is two attempts, decided before either's approval is requested.
  readonly #approvalAttempts = new Map<string, AttemptState>();
  /** Per run and call id, the `ask` attempts whose approval was not requested yet, in order. */
  readonly #unrequested = new Map<string, AttemptState[]>();
  /** Where each decided attempt's state is kept; made here, or shared with `CallChecks`. */
  readonly #attempts: CallAttempts;
  /** Whether the states are made by `CallChecks`, which sees each record first. */
  readonly #shared: boolean;

  /**
   * @param attempts the `CallChecks`' attempts, to share their states (give each record to the
   *   call checks first); without, these checks keep their own.
   */
  constructor(
    readonly strict: boolean,
    readonly findings: Findings,
    attempts?: CallAttempts,
  ) {
    this.#attempts = attempts ?? new CallAttempts();
    this.#shared = attempts !== undefined;
  }

  record(record: LedgerRecord): void {
    let run = this.#runs.get(record.run_id);
    if (run === undefined) {
      run = { attempts: this.#attempts.run(record.run_id), ended: false };
      this.#runs.set(record.run_id, run);
    }
    const attempts = run.attempts;
    const findings = this.findings;
    switch (record.type) {
      case 'call-decision': {
        const state = this.#shared
          ? this.#attempts.stateOf(attempts, record)
          : this.#attempts.decide(attempts, record);
        if (record.effect === 'ask' && record.error_kind === undefined) {
          const key = `${record.run_id}\u0000${record.call_id}`;
          const waiting = this.#unrequested.get(key);
          if (waiting) waiting.push(state);
          else this.#unrequested.set(key, [state]);
        }
        break;
      }
      case 'approval-request': {
        // The first asked attempt of the call awaiting a request, of the same tool and arguments
        // when one is (the call checks report a request that matches none).
        const waiting = this.#unrequested.get(`${record.run_id}\u0000${record.call_id}`) ?? [];
        let index = waiting.findIndex(
          (state) => state.tool === record.tool && state.arguments_digest === record.arguments_digest,
        );
        if (index < 0) index = 0;
        const state = waiting[index];
        if (state) {
          waiting.splice(index, 1);
          this.#approvalAttempts.set(record.approval_id, state);
        }
        break;
      }
      case 'approval-response': {
        const state = this.#approvalAttempts.get(record.approval_id) ?? attempts.latest(record.call_id);
        if (state && record.status === 'approved') state.reviewApproved = true;
        if (state && record.status === 'denied') state.reviewDenied = true;
        break;
      }
      case 'call-end': {
        const state = attempts.get(record.call_id, record.attempt);
        if (!state) break; // the call checks report an end without a decision
        state.ends += 1;
        if (state.ends > 1)
          findings.fail('call-end', `${attemptOf(record)} has more than one call-end`, record);
        // --strict: the outcome and error kind are held to the gate's own table, with the
        // refusal's kind from the decision record.
        if (this.strict) {
          const contradiction = outcomeContradiction(
            standingOf(state),
            record.outcome,
            record.error_kind,
            state.error_kind ?? (state.effect === 'deny' ? 'policy-denied' : undefined),
          );
          if (contradiction !== undefined)
            findings.fail(
              'call-end',
              `${attemptOf(record)}: its outcome contradicts its decision: ${contradiction}`,
              record,
            );
        }
        if (record.grant_consumed && !RAN.has(record.outcome))
          findings.fail(
            'grant',
            `${attemptOf(record)} ended ${record.outcome} but claims its grant was consumed`,
            record,
          );
        break;
      }
      case 'run-end':
        run.ended = true;
        break;
      case 'effective-arguments': {
        // The arguments that ran beside the model's: only after that attempt's decision, and about
        // the arguments it decided (else the record claims another set than the one approved).
        const state = attempts.get(record.call_id, record.attempt);
        if (!state)
          findings.fail(
            'effective-arguments',
            `${attemptOf(record)} has effective arguments but no decision`,
            record,
          );
        else if (state.arguments_digest !== record.arguments_digest)
          findings.fail(
            'effective-arguments',
            `${attemptOf(record)}: the effective arguments name other model arguments than its decision`,
            record,
          );
        break;
      }
      default:
        break;
    }
  }

  /** Reports the attempts left without a `call-end` (failures with `strict`, else warnings). */
  finish(): void {
    for (const [runId, { attempts, ended }] of this.#runs) {
      for (const state of attempts.values()) {
        if (state.ends > 0) continue;
        const cleared =
          state.error_kind === undefined &&
          (state.effect === 'allow' || (state.effect === 'ask' && state.reviewApproved));
        if (!cleared && !ended) continue;
        // An ended run has closed every call: a refused or unanswered one without its end too.
        const message = unendedMessage(state, ended && !cleared, !this.strict);
        if (this.strict)
          this.findings.fail('call-end', message, {
            seq: state.seq,
            run_id: runId,
            type: 'call-decision',
          });
        else this.findings.warn(message);
      }
    }
  }
}

/**
 * `call <id> attempt <n> was <allowed|approved|asked|refused> but has no call-end`, then
 * `, though its run ended` when `runEnded`, then ` (--strict makes this a failure)` when `warning`.
 * Made by one join, so it is one flat string: a template literal makes a tree of joined strings
 * (five or six string objects for this message), and a bundle whose calls have no ends keeps one
 * message per attempt in its report.
 */
function unendedMessage(state: AttemptState, runEnded: boolean, warning: boolean): string {
  const standing =
    state.effect === 'allow'
      ? 'allowed'
      : state.effect === 'ask'
        ? state.reviewApproved
          ? 'approved'
          : 'asked'
        : 'refused';
  return [
    'call ',
    state.call_id,
    ' attempt ',
    state.attempt,
    ' was ',
    standing,
    ' but has no call-end',
    runEnded ? ', though its run ended' : '',
    warning ? ' (--strict makes this a failure)' : '',
  ].join('');
}

/** Runs the fidelity checks (see {@link FidelityChecks}) over records in log order. */
export function checkFidelity(records: readonly LedgerRecord[], strict: boolean, findings: Findings): void {
  const checks = new FidelityChecks(strict, findings);
  for (const record of records) checks.record(record);
  checks.finish();
}

/** The names of the bundle's fields that carry meaning but no signature (see {@link UNSIGNED_BUNDLE_FIELDS}). */
export function unsignedFields(bundle: object): string[] {
  return UNSIGNED_BUNDLE_FIELDS.filter((field) => field in bundle);
}
