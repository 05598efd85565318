import type { LedgerRecord } from '@callgate/core';

/** One call as the ledger tells it: decision, approval, outcome and timings. */
export interface TimelineRow {
  step: number;
  call_id: string;
  minted: boolean;
  attempt: number;
  tool: string;
  effect: string;
  rules: string[];
  error_kind?: string;
  approval?: { id: string; status?: string; reviewer?: string | null; reason?: string | null };
  outcome?: string;
  outcome_error_kind?: string;
  decided_at: number;
  ended_at?: number;
  duration_ms?: number;
}

/**
 * Reads a run's records into one row per call attempt, in decision order. A `model-message`
 * record starts a new step.
 */
export function timelineOf(records: readonly LedgerRecord[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  const byCall = new Map<string, TimelineRow>();
  const byApproval = new Map<string, TimelineRow>();
  let step = 0;
  for (const record of records) {
    switch (record.type) {
      case 'model-message':
        step++;
        break;
      case 'call-decision': {
        const row: TimelineRow = {
          step,
          call_id: record.call_id,
          minted: record.minted,
          attempt: record.attempt,
          tool: record.tool,
          effect: record.effect,
          rules: record.rules,
          ...(record.error_kind ? { error_kind: record.error_kind } : {}),
          decided_at: record.ts,
        };
        rows.push(row);
        byCall.set(record.call_id, row);
        break;
      }
      case 'approval-request': {
        const row = byCall.get(record.call_id);
        if (row) {
          row.approval = { id: record.approval_id };
          byApproval.set(record.approval_id, row);
        }
        break;
      }
      case 'approval-response': {
        const row = byApproval.get(record.approval_id);
        if (row?.approval) Object.assign(row.approval, { status: record.status, reviewer: record.reviewer, reason: record.reason });
        break;
      }
      case 'call-end': {
        const row = byCall.get(record.call_id);
        if (row && row.attempt === record.attempt) {
          row.outcome = record.outcome;
          if (record.error_kind) row.outcome_error_kind = record.error_kind;
          row.ended_at = record.ts;
          if (record.duration_ms !== undefined) row.duration_ms = record.duration_ms;
        }
        break;
      }
      default:
        break;
    }
  }
  return rows;
}

function pad(text: string, width: number): string {
  return text.length >= width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

/** The timeline as a fixed-width text table, one line per call. */
export function formatTimeline(rows: readonly TimelineRow[]): string {
  const header = `${pad('step', 5)}${pad('call', 30)}${pad('tool', 12)}${pad('decision', 9)}${pad('rule', 24)}${pad('approval', 30)}${pad('outcome', 32)}time`;
  const lines = rows.map((row) => {
    const call = row.minted ? `${row.call_id} (minted)` : row.call_id;
    const approval = row.approval
      ? `${row.approval.status ?? 'pending'}${row.approval.reviewer ? ` by ${row.approval.reviewer}` : ''}`
      : '—';
    const kind = row.outcome_error_kind ?? row.error_kind;
    const outcome = `${row.outcome ?? 'open'}${kind && row.outcome !== 'ok' ? ` (${kind})` : ''}`;
    const time =
      row.ended_at !== undefined
        ? `${row.ended_at - row.decided_at} ms${row.duration_ms !== undefined ? ` (tool ${row.duration_ms.toFixed(1)} ms)` : ''}`
        : '';
    return `${pad(String(row.step), 5)}${pad(call, 30)}${pad(row.tool, 12)}${pad(row.effect, 9)}${pad(row.rules.join(',') || '—', 24)}${pad(approval, 30)}${pad(outcome, 32)}${time}`;
  });
  return [header, ...lines].join('\n');
}
