// Call checks of the offline verifier, per run and in log order: an `ask` is paired with at most
// one approval request and one response; a call attempt runs at most once, with the arguments
// decided (and approved); a denied or refused call never runs.
import type { LedgerRecord, LedgerRecordOf } from '@callgate/protocol';
import { AttemptMap } from './attempts.js';
import type { Findings } from './report.js';

interface DecisionState {
  record: LedgerRecordOf<'call-decision'>;
  requests: number;
  responses: number;
  approved?: LedgerRecordOf<'approval-response'>;
  executions: number;
}

interface ApprovalState {
  request: LedgerRecordOf<'approval-request'>;
  decision: DecisionState;
  responses: number;
}

const EXECUTED = new Set(['ok', 'error']);

/** `call <id> attempt <n>`, for messages (built only when one is reported). */
const attemptOf = (record: { call_id: string; attempt: number }): string =>
  `call ${record.call_id} attempt ${record.attempt}`;

class RunCalls {
  readonly #decisions = new AttemptMap<DecisionState>();
  readonly #latestByCall = new Map<string, DecisionState>();
  readonly #approvals = new Map<string, ApprovalState>();

  constructor(readonly findings: Findings) {}

  /** Reports a failed check (no closure or message is made per record, only per failure). */
  #fail(check: 'approval' | 'execution', record: LedgerRecord, message: string): void {
    this.findings.fail(check, message, record);
  }

  decision(record: LedgerRecordOf<'call-decision'>): void {
    if (this.#decisions.has(record.call_id, record.attempt))
      this.findings.fail(
        'execution',
        `call ${record.call_id} attempt ${record.attempt} was decided twice`,
        record,
      );
    const state: DecisionState = { record, requests: 0, responses: 0, executions: 0 };
    this.#decisions.set(record.call_id, record.attempt, state);
    this.#latestByCall.set(record.call_id, state);
  }

  request(record: LedgerRecordOf<'approval-request'>): void {
    const decision = this.#latestByCall.get(record.call_id);
    if (decision === undefined) {
      this.#fail('approval', record, `approval request for call ${record.call_id}, which was never decided`);
      return;
    }
    if (this.#approvals.has(record.approval_id))
      this.#fail('approval', record, `approval ${record.approval_id} was requested twice`);
    this.#approvals.set(record.approval_id, { request: record, decision, responses: 0 });
    const decided = decision.record;
    if (decided.effect !== 'ask')
      this.#fail(
        'approval',
        record,
        `approval requested for call ${record.call_id}, decided ${decided.effect}`,
      );
    decision.requests += 1;
    if (decision.requests > 1)
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
    if (record.call_id !== approval.request.call_id)
      this.#fail(
        'approval',
        record,
        `response to approval ${record.approval_id} names call ${record.call_id}, not ${approval.request.call_id}`,
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
        `call ${decision.record.call_id} attempt ${decision.record.attempt} has more than one approval response`,
      );
    if (record.status !== 'approved') return;
    if (record.edited) {
      this.findings.warn(`approval ${record.approval_id} approved edited arguments (seq ${record.seq})`);
    } else if (record.arguments_digest !== decision.record.arguments_digest) {
      this.#fail(
        'approval',
        record,
        `approval ${record.approval_id} approved other arguments than were decided`,
      );
    }
    decision.approved = record;
  }

  end(record: LedgerRecordOf<'call-end'>): void {
    const decision = this.#decisions.get(record.call_id, record.attempt);
    if (decision === undefined) {
      this.#fail(
        'execution',
        record,
        `${attemptOf(record)} ${EXECUTED.has(record.outcome) ? 'ran' : `ended (${record.outcome})`} without a decision`,
      );
      return;
    }
    if (!EXECUTED.has(record.outcome)) return;
    const decided = decision.record;
    decision.executions += 1;
    if (decision.executions > 1) this.#fail('execution', record, `${attemptOf(record)} ran more than once`);
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
      const approved = decision.approved;
      if (approved === undefined) {
        this.#fail('execution', record, `${attemptOf(record)} ran without an approved approval`);
        return;
      }
      if (record.arguments_digest !== approved.arguments_digest)
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

/** Runs the call checks (`approval`, `execution`) over records in log order. */
export function checkCalls(records: readonly LedgerRecord[], findings: Findings): void {
  const runs = new Map<string, RunCalls>();
  for (const record of records) {
    let run = runs.get(record.run_id);
    if (run === undefined) {
      run = new RunCalls(findings);
      runs.set(record.run_id, run);
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
