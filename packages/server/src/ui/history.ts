// The approvals history: every approval that is no longer waiting (approved, denied, expired,
// withdrawn), newest first, filtered by status and tool.
import { formatDuration } from '@callgate/core';
import type { Approval, ApprovalStatus } from '@callgate/protocol';
import { html } from 'hono/html';
import { askedBy, type RunsById } from './inbox.js';
import { type Markup, timeText } from './layout.js';

/** The statuses the history shows; `all` is every one of them. */
export const HISTORY_STATUSES = ['approved', 'denied', 'expired', 'withdrawn'] as const;
export type HistoryStatus = (typeof HISTORY_STATUSES)[number];

/** What the history page is filtered by (from its query string). */
export interface HistoryFilter {
  status?: HistoryStatus;
  /** A substring of the tool name, case-insensitive. */
  tool?: string;
}

/** Reads the filter from `status` and `tool` query values; anything else is ignored. */
export function historyFilter(status: string | undefined, tool: string | undefined): HistoryFilter {
  const filter: HistoryFilter = {};
  if ((HISTORY_STATUSES as readonly string[]).includes(status ?? '')) filter.status = status as HistoryStatus;
  const trimmed = (tool ?? '').trim().slice(0, 128);
  if (trimmed) filter.tool = trimmed;
  return filter;
}

/** The approvals matching `filter`, newest answer first; pending ones never. */
export function applyHistoryFilter(approvals: readonly Approval[], filter: HistoryFilter): Approval[] {
  const tool = filter.tool?.toLowerCase();
  return approvals
    .filter((approval) => approval.status !== ('pending' satisfies ApprovalStatus))
    .filter((approval) => filter.status === undefined || approval.status === filter.status)
    .filter((approval) => tool === undefined || approval.tool.toLowerCase().includes(tool))
    .sort((a, b) => (b.resolved_at ?? b.created_at) - (a.resolved_at ?? a.created_at));
}

function statusLink(label: string, status: HistoryStatus | undefined, filter: HistoryFilter): Markup {
  const query = new URLSearchParams();
  if (status) query.set('status', status);
  if (filter.tool) query.set('tool', filter.tool);
  const href = `/ui/approvals/history${query.size > 0 ? `?${query}` : ''}`;
  const current = filter.status === status;
  return html`<a class="filter ${status ?? 'all'}" href="${href}" ${current ? html`aria-current="true"` : ''}>${label}</a>`;
}

function answer(approval: Approval): Markup {
  const after =
    approval.resolved_at !== undefined
      ? ` after ${formatDuration(approval.resolved_at - approval.created_at)}`
      : '';
  const by =
    approval.status === 'approved' || approval.status === 'denied'
      ? html` by <strong class="reviewer">${approval.reviewer ?? '—'}</strong>`
      : '';
  return html`<span class="badge solid ${approval.status}">${approval.status}</span>${by}<div class="meta">${timeText(approval.resolved_at)}${after}</div>${
    approval.response_reason ? html`<div class="meta">“${approval.response_reason}”</div>` : ''
  }`;
}

/** The history page's content: filters, then one row per approval. */
export function historyContent(
  approvals: readonly Approval[],
  runs: RunsById,
  filter: HistoryFilter,
): Markup {
  return html`<h1>Approval history</h1>
    <div class="card filters">
      <nav class="row" aria-label="status">
        ${statusLink('All', undefined, filter)} ${HISTORY_STATUSES.map((status) => statusLink(status, status, filter))}
      </nav>
      <form method="get" action="/ui/approvals/history" class="answer">
        ${filter.status ? html`<input type="hidden" name="status" value="${filter.status}" />` : ''}
        <input type="text" name="tool" value="${filter.tool ?? ''}" placeholder="tool name contains…" aria-label="tool" />
        <button type="submit">Filter</button>
      </form>
    </div>
    ${
      approvals.length === 0
        ? html`<p class="empty">No approval matches. Pending ones are in the <a href="/ui/approvals">inbox</a>.</p>`
        : html`<p class="meta">${approvals.length === 1 ? '1 approval' : `${approvals.length} approvals`}</p>
          <table class="history">
            <thead><tr><th>tool</th><th>who asked</th><th>rule and reason</th><th>asked</th><th>answer</th></tr></thead>
            <tbody>
              ${approvals.map(
                (approval) => html`<tr data-approval-id="${approval.id}">
                  <td><code class="tool">${approval.tool}</code><div class="meta"><a href="/ui/runs/${encodeURIComponent(approval.run_id)}">run</a> · <code>${approval.call_id}</code></div></td>
                  <td>${askedBy(runs.get(approval.run_id))}</td>
                  <td><code>${approval.rules.join(', ') || '(default)'}</code><div class="meta">${approval.reason}</div></td>
                  <td class="nowrap">${timeText(approval.created_at)}</td>
                  <td class="answer-cell">${answer(approval)}</td>
                </tr>`,
              )}
            </tbody>
          </table>`
    }`;
}
