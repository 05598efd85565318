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

/** What `denied` may carry for a call whose approval was not given, beside no kind at all. */
const UNANSWERED_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>(['approval-pending', 'approval-expired']);

/**
 * Why an outcome contradicts how the gate stood on its call, or `undefined` when the table allows
 * it:
 *
 * | standing | outcome | error kind |
 * |---|---|---|
 * | allowed | `ok` | none |
 * | allowed | `error`, `changed-after-decision`, `denied`, `decided-not-completed` | none, or any kind but a decision's (`policy-denied`, `approval-denied`, `approval-pending`, `approval-expired`) |
 * | approval-denied | `denied` | none or `approval-denied` |
 * | approval-unanswered | `denied` | none, `approval-pending` or `approval-expired` |
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
        ? UNANSWERED_KINDS.has(errorKind)
        : refusalKind !== undefined
          ? errorKind === refusalKind
          : errorKind !== 'approval-denied' && !UNANSWERED_KINDS.has(errorKind);
  return allowed ? undefined : `${said}: its denial cannot claim ${errorKind}`;
}
