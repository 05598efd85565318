import { formatDuration, type RunRow } from '@callgate/core';
import type { TimelineEntry } from '@callgate/core/ledger';
import { html } from 'hono/html';
import type { Markup } from './layout.js';
import { timeText } from './layout.js';

/** What the server's verifier said of a fresh export of the run. */
export interface VerificationView {
  ok: boolean;
  records: number;
  checkpoints: number;
  failures: { check: string; message: string; seq?: number }[];
  warnings: string[];
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

const runLink = (run: RunRow) =>
  html`<a href="/ui/runs/${encodeURIComponent(run.run_id)}"><code>${run.run_id}</code></a>`;

/** The runs list: newest first, with a link to older runs. */
export function runsContent(runs: readonly RunRow[], olderThan: number | undefined): Markup {
  return html`<h1>Runs</h1>
    ${
      runs.length === 0
        ? html`<p class="empty">No runs yet.</p>`
        : html`<table>
            <thead><tr><th>run</th><th>status</th><th>principal</th><th>framework</th><th>started</th><th>ended</th></tr></thead>
            <tbody>
              ${runs.map(
                (run) => html`<tr>
                  <td>${runLink(run)}</td>
                  <td><span class="badge ${run.status}">${run.status}</span></td>
                  <td>${run.principal}</td>
                  <td>${run.framework}</td>
                  <td>${timeText(run.started_at)}</td>
                  <td>${timeText(run.ended_at)}</td>
                </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${olderThan !== undefined ? html`<p><a href="/ui/runs?before=${olderThan}">Older runs →</a></p>` : ''}`;
}

function approvalCell(entry: TimelineEntry): Markup | string {
  const approval = entry.approval;
  if (!approval) return '—';
  return html`<span class="badge solid ${approval.status}">${approval.status}</span>
    ${approval.reviewer ? html` by <strong class="reviewer">${approval.reviewer}</strong>` : ''}
    ${approval.reason ? html`<div class="meta">${approval.reason}</div>` : ''}`;
}

function timingCell(entry: TimelineEntry): Markup {
  const total = entry.ended_at !== undefined ? formatDuration(entry.ended_at - entry.decided_at) : '';
  const tool = entry.duration_ms !== undefined ? ` (tool ${formatDuration(entry.duration_ms)})` : '';
  return html`<div>${timeText(entry.decided_at)}</div><div class="meta">${total}${tool}</div>`;
}

/** The timeline table: one row per call attempt; refreshed live while the run is open. */
export function timelineTable(entries: readonly TimelineEntry[]): Markup {
  if (entries.length === 0) return html`<p class="empty">No calls yet.</p>`;
  // Steps count model-message records, which API clients need not send. When no call comes
  // after one (every step is 0), the steps say nothing, so the column shows "—" rather than a
  // misleading 0 on every row; the rows are in call order either way. In a run with messages,
  // step 0 keeps its meaning: calls made before the first message.
  const stepped = entries.some((entry) => entry.step > 0);
  return html`<table class="timeline">
    <thead>
      <tr><th>step</th><th>call</th><th>tool</th><th>decision</th><th>rule and reason</th><th>approval</th><th>outcome</th><th>time</th></tr>
    </thead>
    <tbody>
      ${entries.map((entry) => {
        const kind = entry.outcome_error_kind ?? entry.error_kind;
        return html`<tr data-call-id="${entry.call_id}">
          <td class="step">${stepped ? entry.step : '—'}</td>
          <td><code>${entry.call_id}</code>${entry.minted ? html` <span class="meta">(minted)</span>` : ''}${
            entry.attempt > 1 ? html` <span class="meta">attempt ${entry.attempt}</span>` : ''
          }</td>
          <td><code>${entry.tool}</code></td>
          <td><span class="badge ${entry.effect}">${entry.effect}</span>${kind && entry.effect === 'deny' && !entry.outcome ? html`<div class="meta">${kind}</div>` : ''}</td>
          <td><code>${entry.rules.join(', ') || '(default)'}</code><div class="meta">${entry.reason}</div></td>
          <td>${approvalCell(entry)}</td>
          <td class="outcome">${
            entry.outcome
              ? html`<span class="badge ${entry.outcome === 'ok' ? 'ok' : 'bad'}">${entry.outcome}</span>${
                  kind && entry.outcome !== 'ok' ? html`<div class="meta">${kind}</div>` : ''
                }`
              : html`<span class="meta">open</span>`
          }</td>
          <td>${timingCell(entry)}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function verificationBox(verification: VerificationView | { error: string }): Markup {
  if ('error' in verification) {
    return html`<div class="card verify bad"><strong class="bad">Could not verify</strong> — ${verification.error}</div>`;
  }
  return html`<div class="card verify ${verification.ok ? 'ok' : 'bad'}" id="verification">
    <strong class="${verification.ok ? 'ok' : 'bad'}">${verification.ok ? 'Verified' : 'Verification FAILED'}</strong>
    <span class="meta">— ${plural(verification.records, 'record')}, ${plural(verification.checkpoints, 'checkpoint')}, checked against this server’s log key</span>
    ${
      verification.failures.length > 0
        ? html`<ul>${verification.failures.map((failure) => html`<li><code>${failure.check}</code>${failure.seq !== undefined ? html` (seq ${failure.seq})` : ''}: ${failure.message}</li>`)}</ul>`
        : ''
    }
    ${verification.warnings.length > 0 ? html`<ul class="meta">${verification.warnings.map((warning) => html`<li>${warning}</li>`)}</ul>` : ''}
  </div>`;
}

/** The run page: facts, verification status, bundle download and the live timeline. */
export function runContent(
  run: RunRow,
  entries: readonly TimelineEntry[],
  verification: VerificationView | { error: string },
  publicKey?: string,
): Markup {
  const id = encodeURIComponent(run.run_id);
  const labels = Object.entries(run.labels);
  return html`<h1>Run <code>${run.run_id}</code></h1>
    <div class="card">
      <div class="row">
        <span class="badge ${run.status}" id="run-status">${run.status}</span>
        <span><span class="meta">principal</span> ${run.principal}</span>
        <span><span class="meta">framework</span> ${run.framework}</span>
        <span><span class="meta">started</span> ${timeText(run.started_at)}</span>
        ${run.ended_at !== undefined ? html`<span><span class="meta">ended</span> ${timeText(run.ended_at)}</span>` : ''}
        ${run.parent_run_id ? html`<span><span class="meta">parent</span> <a href="/ui/runs/${encodeURIComponent(run.parent_run_id)}">${run.parent_run_id}</a></span>` : ''}
      </div>
      ${labels.length > 0 ? html`<div class="meta">${labels.map(([name, value]) => html`<code>${name}=${value}</code> `)}</div>` : ''}
      <p><a href="/ui/runs/${id}/bundle" download>Download bundle</a> <span class="meta">(callgate-bundle/1; verify offline with <code>callgate verify FILE --public-key KEY</code>)</span></p>
      ${publicKey ? html`<p class="meta">log key to pin <code class="log-key">${publicKey}</code> (also <code>callgate log-key show</code>)</p>` : ''}
    </div>
    ${verificationBox(verification)}
    <h2>Timeline</h2>
    <section id="timeline" data-live="run" data-source="/ui/runs/${id}/timeline" ${run.status === 'running' ? html`data-poll="2000"` : ''}>
      ${timelineTable(entries)}
    </section>`;
}
