// What an outcome may claim for a call, given how the gate stood on it: the one table of allowed
// (decision, outcome, error kind) combinations. The gate refuses a report outside it (recorded
// as a `refusal`, outcome-contradicts-grant: invariants 2 and 3) and `callgate verify --strict`
// fails a `call-end` outside it (`outcome`), with the same words.
import type { ErrorKind, Outcome } from '@callgate/protocol';

/**
 * How the gate stood on a call when its outcome came:
 * - `allowed`: decided `allow`, or `ask` and approved;
 * - `approval-denied`: decided `ask`, and a person denied it;
 * - `approval-unanswered`: decided `ask`, with no approval given (pending, expired, withdrawn);
 * - `refused`: denied by the policy or refused by the gate before a decision (its kind, e.g.
 *   `policy-denied` or `tool-args-invalid`, on the `call-decision` record).
 */
export type CallStanding = 'allowed' | 'approval-denied' | 'approval-unanswered' | 'refused';

/** The error kinds that name a decision (the policy's, a person's): only that decision may claim them. */
const DECISION_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'policy-denied',
  'approval-denied',
  'approval-pending',
  'approval-expired',
]);

/** The decision kinds `denied` may carry for a call whose approval was not given. */
const UNANSWERED_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>(['approval-pending', 'approval-expired']);

/**
 * True when a call whose approval was not given may be denied with `kind`: the approval's own
 * kinds, or a reason of the client's own for not running it (the agent lacks the tool, its own
 * argument check, a cancelled run, ...), never the policy's or a person's denial.
 */
const unansweredMayCarry = (kind: ErrorKind): boolean =>
  UNANSWERED_KINDS.has(kind) || !DECISION_KINDS.has(kind);

/**
 * Why an outcome contradicts how the gate stood on its call, or `undefined` when the table allows
 * it:
 *
 * | standing | outcome | error kind |
 * |---|---|---|
 * | allowed | `ok` | none |
 * | allowed | `error`, `changed-after-decision`, `denied`, `decided-not-completed` | none, or any kind but a decision's (`policy-denied`, `approval-denied`, `approval-pending`, `approval-expired`) |
 * | approval-denied | `denied` | none or `approval-denied` |
 * | approval-unanswered | `denied` | none, `approval-pending`, `approval-expired`, or a kind of the client's own (not `policy-denied` or `approval-denied`) |
 * | refused | `denied` | none or the refusal's own kind (when not known: any kind but a person's) |
 *
 * A call that was not allowed cannot have run, nor be "decided and not completed".
 *
 * @param refusalKind the kind on a refused call's `call-decision` record, when known.
 */
export function outcomeContradiction(
  standing: CallStanding,
  outcome: Outcome,
  errorKind: ErrorKind | undefined,
  refusalKind?: ErrorKind,
): string | undefined {
  if (standing === 'allowed') {
    if (outcome === 'ok')
      return errorKind === undefined ? undefined : `an ok outcome carries no error kind (got ${errorKind})`;
    if (errorKind !== undefined && DECISION_KINDS.has(errorKind))
      return `the call was allowed: its outcome cannot claim ${errorKind}`;
    return undefined;
  }
  const said =
    standing === 'approval-denied'
      ? 'a person denied it'
      : standing === 'approval-unanswered'
        ? 'its approval was not given'
        : `it was refused${refusalKind ? ` (${refusalKind})` : ''}`;
  if (outcome !== 'denied') return `${said}: its outcome can only be denied, not ${outcome}`;
  if (errorKind === undefined) return undefined;
  const allowed =
    standing === 'approval-denied'
      ? errorKind === 'approval-denied'
      : standing === 'approval-unanswered'
        ? unansweredMayCarry(errorKind)
        : refusalKind !== undefined
          ? errorKind === refusalKind
          : errorKind !== 'approval-denied' && !UNANSWERED_KINDS.has(errorKind);
  return allowed ? undefined : `${said}: its denial cannot claim ${errorKind}`;
}
