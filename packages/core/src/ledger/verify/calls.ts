// Call checks of the offline verifier, per run and in log order: an `ask` is paired with at most
// one approval request and one response; a call attempt runs at most once, with the arguments
// decided (and approved); a denied or refused call never runs. The checks run as the records are
// read ({@link CallChecks}), keeping per call attempt only the fields they compare, not the
// records, so a parsed record is garbage as soon as the verifier has read it.
import type { LedgerRecord, LedgerRecordOf } from '@callgate/protocol';
import { type AttemptMap, type AttemptState, CallAttempts } from './attempts.js';
import type { Findings } from './report.js';

/** What the call checks keep of an `approval-request`. */
interface ApprovalState {
  call_id: string;
  decision: AttemptState;
  responses: number;
}

const EXECUTED = new Set(['ok', 'error']);

/** `call <id> attempt <n>`, for messages (built only when one is reported). */
const attemptOf = (record: { call_id: string; attempt: number }): string =>
  `call ${record.call_id} attempt ${record.attempt}`;

class RunCalls {
  readonly #approvals = new Map<string, ApprovalState>();

  constructor(
    readonly findings: Findings,
    readonly attempts: CallAttempts,
    /** This run's decided attempts (shared with the fidelity checks). */
    readonly decisions: AttemptMap<AttemptState>,
  ) {}

  /** Reports a failed check (no closure or message is made per record, only per failure). */
  #fail(check: 'approval' | 'execution', record: LedgerRecord, message: string): void {
    this.findings.fail(check, message, record);
  }

  decision(record: LedgerRecordOf<'call-decision'>): void {
    this.attempts.decide(this.decisions, record);
    if (this.attempts.replacedAnother)
      this.findings.fail(
        'execution',
        `call ${record.call_id} attempt ${record.attempt} was decided twice`,
        record,
      );
  }

  request(record: LedgerRecordOf<'approval-request'>): void {
    const decided = this.decisions.latest(record.call_id);
    if (decided === undefined) {
      this.#fail('approval', record, `approval request for call ${record.call_id}, which was never decided`);
      return;
    }
    if (this.#approvals.has(record.approval_id))
      this.#fail('approval', record, `approval ${record.approval_id} was requested twice`);
    this.#approvals.set(record.approval_id, { call_id: record.call_id, decision: decided, responses: 0 });
    if (decided.effect !== 'ask')
      this.#fail(
        'approval',
        record,
        `approval requested for call ${record.call_id}, decided ${decided.effect}`,
      );
    decided.requests += 1;
    if (decided.requests > 1)
      this.#fail(
        'approval',
        record,
        `call ${record.call_id} attempt ${decided.attempt} has more than one approval request`,
      );
    if (record.arguments_digest !== decided.arguments_digest)
      this.#fail(
        'approval',
        record,
        `approval ${record.approval_id} names other arguments than the decision on call ${record.call_id}`,
      );
    if (record.tool !== decided.tool)
      this.#fail(
        'approval',
        record,
        `approval ${record.approval_id} names tool ${record.tool}, decided ${decided.tool}`,
      );
  }

  response(record: LedgerRecordOf<'approval-response'>): void {
    const approval = this.#approvals.get(record.approval_id);
    if (approval === undefined) {
      this.#fail('approval', record, `response to approval ${record.approval_id}, which was never requested`);
      return;
    }
    if (record.call_id !== approval.call_id)
      this.#fail(
        'approval',
        record,
        `response to approval ${record.approval_id} names call ${record.call_id}, not ${approval.call_id}`,
      );
    approval.responses += 1;
    if (approval.responses > 1)
      this.#fail('approval', record, `approval ${record.approval_id} was answered more than once`);
    const decision = approval.decision;
    decision.responses += 1;
    if (decision.responses > 1)
      this.#fail(
        'approval',
        record,
        `call ${decision.call_id} attempt ${decision.attempt} has more than one approval response`,
      );
    if (record.status !== 'approved') return;
    if (record.edited) {
      this.findings.warn(`approval ${record.approval_id} approved edited arguments (seq ${record.seq})`);
    } else if (record.arguments_digest !== decision.arguments_digest) {
      this.#fail(
        'approval',
        record,
        `approval ${record.approval_id} approved other arguments than were decided`,
      );
    }
    decision.approved = record.arguments_digest;
  }

  end(record: LedgerRecordOf<'call-end'>): void {
    const decided = this.decisions.get(record.call_id, record.attempt);
    if (decided === undefined) {
      this.#fail(
        'execution',
        record,
        `${attemptOf(record)} ${EXECUTED.has(record.outcome) ? 'ran' : `ended (${record.outcome})`} without a decision`,
      );
      return;
    }
    if (!EXECUTED.has(record.outcome)) return;
    decided.executions += 1;
    if (decided.executions > 1) this.#fail('execution', record, `${attemptOf(record)} ran more than once`);
    if (record.tool !== decided.tool)
      this.#fail(
        'execution',
        record,
        `${attemptOf(record)} ran tool ${record.tool}, decided ${decided.tool}`,
      );
    if (decided.effect === 'deny' || decided.error_kind !== undefined) {
      this.#fail(
        'execution',
        record,
        `${attemptOf(record)} ran although it was ${decided.effect === 'deny' ? 'denied' : `refused (${decided.error_kind})`}`,
      );
      return;
    }
    if (decided.effect === 'ask') {
      if (decided.approved === undefined) {
        this.#fail('execution', record, `${attemptOf(record)} ran without an approved approval`);
        return;
      }
      if (record.arguments_digest !== decided.approved)
        this.#fail('execution', record, `${attemptOf(record)} ran with other arguments than approved`);
    } else if (
      decided.arguments_digest !== null &&
      record.arguments_digest !== null &&
      record.arguments_digest !== decided.arguments_digest
    ) {
      this.#fail('execution', record, `${attemptOf(record)} ran with other arguments than decided`);
    }
  }
}

/**
 * The call checks (`approval`, `execution`) as records are read: give each well-formed record, in
 * log order, to {@link CallChecks.record}; failures go to `findings` as they are found.
 */
export class CallChecks {
  readonly #runs = new Map<string, RunCalls>();

  /**
   * @param attempts where each decided attempt's state is made and kept; give the same to
   *   `FidelityChecks` to share it (the call checks must see each record first).
   */
  constructor(
    readonly findings: Findings,
    readonly attempts: CallAttempts = new CallAttempts(),
  ) {}

  record(record: LedgerRecord): void {
    let run = this.#runs.get(record.run_id);
    if (run === undefined) {
      run = new RunCalls(this.findings, this.attempts, this.attempts.run(record.run_id));
      this.#runs.set(record.run_id, run);
    }
    switch (record.type) {
      case 'call-decision':
        run.decision(record);
        break;
      case 'approval-request':
        run.request(record);
        break;
      case 'approval-response':
        run.response(record);
        break;
      case 'call-end':
        run.end(record);
        break;
      default:
        break;
    }
  }
}

/** Runs the call checks (`approval`, `execution`) over records in log order. */
export function checkCalls(records: readonly LedgerRecord[], findings: Findings): void {
  const checks = new CallChecks(findings);
  for (const record of records) checks.record(record);
}
