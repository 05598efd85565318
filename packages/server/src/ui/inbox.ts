import { formatDuration, type RunRow } from '@callgate/core';
import type { Approval } from '@callgate/protocol';
import { html } from 'hono/html';
import { csrfField, type Markup, timeText } from './layout.js';
import type { Session } from './session.js';

/** The runs the approvals on a page belong to, by run id (who asked: principal, framework, labels). */
export type RunsById = ReadonlyMap<string, RunRow>;

function argumentsText(value: unknown): string {
  try {
    return JSON.stringify(value ?? {}, null, 2);
  } catch {
    return String(value);
  }
}

/**
 * The values the framework adds to the call before it runs (`Approval.injected`): what runs beyond
 * what the model asked, shown apart from the model's arguments and named as such. Nothing when
 * the framework injects nothing.
 */
function injectedBlock(injected: Record<string, unknown> | undefined): Markup | string {
  if (injected === undefined || Object.keys(injected).length === 0) return '';
  return html`<div class="injected">
      <p class="meta source"><span class="badge injected">injected</span> added by the framework, not from the
        model: the call runs with these too (<span class="names">${Object.keys(injected).sort().join(', ')}</span>)</p>
      <pre class="injected-values">${argumentsText(injected)}</pre>
    </div>`;
}

/** Who asked: the key's name (the run's principal), the framework and the run's labels. */
export function askedBy(run: RunRow | undefined): Markup {
  if (!run) return html`<span class="who meta">unknown run</span>`;
  const labels = Object.entries(run.labels);
  return html`<span class="who"><span class="meta">asked by</span> <strong class="principal">${run.principal}</strong>
    <span class="meta">via</span> <span class="framework">${run.framework}</span>${
      labels.length > 0
        ? html` ${labels.map(([name, value]) => html`<code class="label">${name}=${value}</code> `)}`
        : ''
    }</span>`;
}

function approvalCard(approval: Approval, run: RunRow | undefined, session: Session, now: number): Markup {
  return html`<article class="card approval" data-approval-id="${approval.id}">
    <div class="row">
      <strong><code class="tool">${approval.tool}</code></strong>
      <span class="badge pending">pending</span>
      <span class="meta" data-expires-at="${approval.expires_at}">${formatDuration(approval.expires_at - now)} left</span>
    </div>
    <div class="row">${askedBy(run)}</div>
    <div class="meta">
      run <a href="/ui/runs/${encodeURIComponent(approval.run_id)}"><code>${approval.run_id}</code></a> · call
      <code>${approval.call_id}</code> · asked ${timeText(approval.created_at)}, expires ${timeText(approval.expires_at)}
    </div>
    <p><span class="meta">rule</span> <code class="rule">${approval.rules.join(', ') || '(default)'}</code> — <span class="reason">${approval.reason}</span></p>
    <p class="meta source">arguments from the model</p>
    <pre class="arguments">${argumentsText(approval.arguments)}</pre>
    ${injectedBlock(approval.injected)}
    <form class="answer" method="post" action="/ui/approvals/${encodeURIComponent(approval.id)}/answer">
      ${csrfField(session)}
      <input type="text" name="reason" maxlength="2000" placeholder="reason (recorded in the ledger)" aria-label="reason" />
      <button class="approve" type="submit" name="decision" value="approve">✓ Approve</button>
      <button class="deny" type="submit" name="decision" value="deny">✗ Deny</button>
    </form>
  </article>`;
}

/** The inbox's live part: every pending approval, oldest first, each with who asked and its answer form. */
export function inboxList(
  approvals: readonly Approval[],
  runs: RunsById,
  session: Session,
  now: number,
): Markup {
  if (approvals.length === 0)
    return html`<p class="empty">No approval is waiting. New ones appear here as agents ask;
      answered, expired and withdrawn ones are in the <a href="/ui/approvals/history">history</a>.</p>`;
  return html`<p class="meta">${approvals.length} waiting · <a href="/ui/approvals/history">history</a></p>
    ${approvals.map((approval) => approvalCard(approval, runs.get(approval.run_id), session, now))}`;
}

/** The inbox page's content: the live list, refreshed on every approval event. */
export function inboxContent(
  approvals: readonly Approval[],
  runs: RunsById,
  session: Session,
  now: number,
): Markup {
  return html`<h1>Approvals</h1>
    <section id="inbox" data-live="inbox" data-source="/ui/approvals/list">${inboxList(approvals, runs, session, now)}</section>`;
}
