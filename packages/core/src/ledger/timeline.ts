import type { LedgerRecord } from '@callgate/protocol';

/** One call attempt as the ledger tells it: decision, approval, outcome and timings (epoch ms). */
export interface TimelineEntry {
  step: number;
  call_id: string;
  minted: boolean;
  attempt: number;
  tool: string;
  effect: string;
  rules: string[];
  reason: string;
  error_kind?: string;
  approval?: {
    id: string;
    status: string;
    reviewer?: string | null;
    reason?: string | null;
    expires_at: number;
  };
  outcome?: string;
  outcome_error_kind?: string;
  grant_consumed?: boolean;
  decided_at: number;
  ended_at?: number;
  duration_ms?: number;
}

/**
 * Reads a run's records (in `run_seq` order) into one entry per call attempt, in decision order.
 * Each `model-message` record starts a new step. The CLI's table and the web timeline both read it.
 */
export function timelineOf(records: readonly LedgerRecord[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  const byCall = new Map<string, TimelineEntry>();
  const byApproval = new Map<string, TimelineEntry>();
  let step = 0;
  for (const record of records) {
    switch (record.type) {
      case 'model-message':
        step++;
        break;
      case 'call-decision': {
        const entry: TimelineEntry = {
          step,
          call_id: record.call_id,
          minted: record.minted,
          attempt: record.attempt,
          tool: record.tool,
          effect: record.effect,
          rules: record.rules,
          reason: record.reason,
          ...(record.error_kind ? { error_kind: record.error_kind } : {}),
          decided_at: record.ts,
        };
        entries.push(entry);
        byCall.set(record.call_id, entry);
        break;
      }
      case 'approval-request': {
        const entry = byCall.get(record.call_id);
        if (entry) {
          entry.approval = { id: record.approval_id, status: 'pending', expires_at: record.expires_at };
          byApproval.set(record.approval_id, entry);
        }
        break;
      }
      case 'approval-response': {
        const approval = byApproval.get(record.approval_id)?.approval;
        if (approval)
          Object.assign(approval, {
            status: record.status,
            reviewer: record.reviewer,
            reason: record.reason,
          });
        break;
      }
      case 'call-end': {
        const entry = byCall.get(record.call_id);
        if (entry && entry.attempt === record.attempt) {
          entry.outcome = record.outcome;
          if (record.error_kind) entry.outcome_error_kind = record.error_kind;
          entry.grant_consumed = record.grant_consumed;
          entry.ended_at = record.ts;
          if (record.duration_ms !== undefined) entry.duration_ms = record.duration_ms;
        }
        break;
      }
      default:
        break;
    }
  }
  return entries;
}
