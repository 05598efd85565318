import { formatDuration } from '@callgate/core';
import type { TimelineEntry } from '@callgate/core/ledger';
import { table } from '../format.js';

/** The timeline as a text table with aligned columns, one line per call. */
export function formatTimeline(rows: readonly TimelineEntry[]): string {
  const header = ['step', 'call', 'tool', 'decision', 'rule', 'approval', 'outcome', 'time'];
  const lines = rows.map((row) => {
    const call = row.minted ? `${row.call_id} (minted)` : row.call_id;
    const approval = row.approval
      ? `${row.approval.status ?? 'pending'}${row.approval.reviewer ? ` by ${row.approval.reviewer}` : ''}`
      : '—';
    const kind = row.outcome_error_kind ?? row.error_kind;
    const outcome = `${row.outcome ?? 'open'}${kind && row.outcome !== 'ok' ? ` (${kind})` : ''}`;
    const time =
      row.ended_at !== undefined
        ? `${formatDuration(row.ended_at - row.decided_at)}${row.duration_ms !== undefined ? ` (tool ${formatDuration(row.duration_ms)})` : ''}`
        : '';
    return [
      String(row.step),
      call,
      row.tool,
      row.effect,
      row.rules.join(',') || '—',
      approval,
      outcome,
      time,
    ];
  });
  return table([header, ...lines]);
}
