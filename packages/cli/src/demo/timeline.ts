import { type TimelineEntry, truncateText } from '@callgate/core';

function pad(text: string, width: number): string {
  return text.length >= width ? truncateText(text, width - 1, '…') : text.padEnd(width);
}

/** The timeline as a fixed-width text table, one line per call. */
export function formatTimeline(rows: readonly TimelineEntry[]): string {
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
