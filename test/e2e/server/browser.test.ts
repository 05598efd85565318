// A reviewer in a real browser (Debian's chromium through playwright-core) answers an approval
// while an agent waits on it over HTTP; the run's timeline then shows the call completed.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CallgateClient } from '@callgate/client';
import { launchChromium } from '@callgate/testing/browser';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type ServerProcess, startCallgate } from './harness.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'server');
let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await startCallgate({ keys: { 'agent-7': 'agent', 'rita-reviewer': 'reviewer' } });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  const code = await server?.stop();
  expect(code).toBe(0);
}, 30_000);

async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

describe('approvals in the browser', () => {
  it('signs in, sees a pending approval arrive live, approves it, and sees the call complete', async () => {
    const agent = new CallgateClient({ url: server.url, apiKey: server.keys['agent-7'] ?? '' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.setDefaultTimeout(15_000);

    await page.goto(`${server.url}/ui/approvals`);
    await page.waitForURL('**/ui/sign-in');
    await page.fill('input[name=key]', server.keys['rita-reviewer'] ?? '');
    await page.click('button[type=submit]');
    await page.waitForURL('**/ui/approvals');
    await page.getByText('No approval is waiting').waitFor();
    const cookies = await page.context().cookies();
    expect(cookies.find((cookie) => cookie.name === 'callgate_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    await shot(page, '1-inbox-empty.png');

    // The agent asks for a large invoice and waits on the approval (long-poll), while the inbox is open.
    const run = await agent.startRun({ framework: 'browser-test', labels: { story: 'invoice' } });
    const decided = await agent.decide(
      run.run_id,
      [{ id: 'call-pay', tool: 'send_invoice', arguments: { to: 'ACME GmbH', amount: 4200 } }],
      {
        message: { role: 'assistant', content: 'Paying the ACME invoice.' },
      },
    );
    const verdict = decided.verdicts[0];
    expect(verdict?.status).toBe('pending');
    const approvalId = verdict?.approval?.id ?? '';
    const waiting = agent.waitForApproval(approvalId, { timeoutMs: 60_000 });

    const card = page.locator(`article[data-approval-id="${approvalId}"]`);
    await card.waitFor();
    await expect(card.locator('.tool').textContent()).resolves.toBe('send_invoice');
    await expect(card.locator('.rule').textContent()).resolves.toBe('large-invoices');
    await expect(card.locator('.arguments').textContent()).resolves.toContain('ACME GmbH');
    await expect(card.locator('[data-expires-at]').textContent()).resolves.toMatch(/left$/);
    await shot(page, '2-approval-pending.png');

    await card.locator('input[name=reason]').fill('ACME is a known vendor');
    await card.locator('button.approve').click();
    await page.getByText('send_invoice: approved (ACME is a known vendor)').waitFor();
    await shot(page, '3-approved.png');

    // The waiting agent receives the grant, consumes it, runs the tool and reports the outcome.
    const state = await waiting;
    expect(state.approval).toMatchObject({ status: 'approved', reviewer: 'rita-reviewer' });
    const grant = state.grant;
    expect(grant?.token).toMatch(/^cgt_/);
    await agent.consumeGrant({
      token: grant?.token ?? '',
      run_id: run.run_id,
      call_id: 'call-pay',
      tool: 'send_invoice',
      arguments: state.arguments ?? {},
    });
    await agent.recordOutcome(run.run_id, {
      call_id: 'call-pay',
      outcome: 'ok',
      result: { invoice: 'INV-1' },
      duration_ms: 12.5,
      grant_consumed: true,
    });
    await agent.endRun(run.run_id, 'completed');

    await page.goto(`${server.url}/ui/runs`);
    await page.locator(`a:has-text("${run.run_id}")`).click();
    await page.waitForURL(`**/ui/runs/${run.run_id}`);
    const row = page.locator('tr[data-call-id="call-pay"]');
    await row.locator('.outcome').getByText('ok').waitFor();
    await expect(row.locator('.reviewer').textContent()).resolves.toBe('rita-reviewer');
    await expect(page.locator('#verification').textContent()).resolves.toContain('Verified');
    await expect(page.locator('#run-status').textContent()).resolves.toBe('completed');
    await shot(page, '4-run-timeline.png');

    const download = page.waitForEvent('download');
    await page.getByText('Download bundle').click();
    expect((await download).suggestedFilename()).toBe(`callgate-run-${run.run_id}.json`);
    await page.close();
  }, 90_000);
});
