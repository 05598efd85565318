import type { Approval } from '@callgate/protocol';
import { html } from 'hono/html';
import { csrfField, type Markup, timeText } from './layout.js';
import type { Session } from './session.js';

function argumentsText(value: unknown): string {
  try {
    return JSON.stringify(value ?? {}, null, 2);
  } catch {
    return String(value);
  }
}

function approvalCard(approval: Approval, session: Session): Markup {
  return html`<article class="card approval" data-approval-id="${approval.id}">
    <div class="row">
      <strong><code class="tool">${approval.tool}</code></strong>
      <span class="badge pending">pending</span>
      <span class="meta" data-expires-at="${approval.expires_at}">until ${timeText(approval.expires_at)}</span>
    </div>
    <div class="meta">
      run <a href="/ui/runs/${encodeURIComponent(approval.run_id)}"><code>${approval.run_id}</code></a> · call
      <code>${approval.call_id}</code> · asked ${timeText(approval.created_at)}
    </div>
    <p><span class="meta">rule</span> <code class="rule">${approval.rules.join(', ') || '(default)'}</code> — <span class="reason">${approval.reason}</span></p>
    <pre class="arguments">${argumentsText(approval.arguments)}</pre>
    <form class="answer" method="post" action="/ui/approvals/${encodeURIComponent(approval.id)}/answer">
      ${csrfField(session)}
      <input type="text" name="reason" maxlength="2000" placeholder="reason (recorded in the ledger)" aria-label="reason" />
      <button class="approve" type="submit" name="decision" value="approve">Approve</button>
      <button class="deny" type="submit" name="decision" value="deny">Deny</button>
    </form>
  </article>`;
}

/** The inbox's live part: every pending approval, oldest first, each with its answer form. */
export function inboxList(approvals: readonly Approval[], session: Session): Markup {
  if (approvals.length === 0)
    return html`<p class="empty">No approval is waiting. New ones appear here as agents ask.</p>`;
  return html`<p class="meta">${approvals.length} waiting</p>
    ${approvals.map((approval) => approvalCard(approval, session))}`;
}

/** The inbox page's content: the live list, refreshed on every approval event. */
export function inboxContent(approvals: readonly Approval[], session: Session): Markup {
  return html`<h1>Approvals</h1>
    <section id="inbox" data-live="inbox" data-source="/ui/approvals/list">${inboxList(approvals, session)}</section>`;
}
