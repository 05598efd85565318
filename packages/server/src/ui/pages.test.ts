// Every page of the web UI in a real browser (Debian's chromium through playwright-core), served
// over HTTP on 127.0.0.1 from an app on an in-memory engine whose clock the test moves (so an
// approval can expire without waiting): sign-in, the inbox with who asked, the approve and deny
// banners, the history and its filters, runs, a run, and the not-found page. Each page is
// screenshotted to test-artifacts/ui-pages/ and checked to share the one layout.

import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { CallgateClient } from '@callgate/client';
import { launchChromium } from '@callgate/testing/browser';
import { memoryEngine } from '@callgate/testing/server';
import { serve } from '@hono/node-server';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { createApiKey } from '../keys.js';

const SCREENSHOTS = resolve(import.meta.dirname, '../../../../test-artifacts/ui-pages');
let now = Date.UTC(2026, 10, 2, 9, 30);
let browser: Browser;
let server: ReturnType<typeof serve>;
let url: string;
let keys: { agent: string; reviewer: string };

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  const { engine, publicKey } = await memoryEngine({ clock: () => now });
  const app = createApp({ engine, publicKey, clock: () => now });
  keys = {
    agent: (await createApiKey(engine.store, { role: 'agent', name: 'billing-agent' })).key,
    reviewer: (await createApiKey(engine.store, { role: 'reviewer', name: 'rita' })).key,
  };
  server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((ready) => server.once('listening', () => ready()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await new Promise((done) => server?.close(done));
});

/** The text a person sees in `locator` (laid out: line breaks included), not the DOM's text. */
function shown(locator: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is what is rendered on screen.
  return locator.innerText();
}

async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

/** Every page shares the layout: the header with the brand, the one style sheet, a main. */
async function expectLayout(page: Page, signedIn: boolean) {
  await expect(page.locator('header .brand').textContent()).resolves.toBe('callgate');
  await expect(page.locator('link[rel=stylesheet]').getAttribute('href')).resolves.toBe(
    '/ui/assets/style.css',
  );
  expect(await page.locator('main').count()).toBe(1);
  expect(await page.locator('header nav a').count()).toBe(signedIn ? 3 : 0);
}

/** Asks for a large invoice in a new run; resolves with the approval's id. */
async function ask(agent: CallgateClient, amount: number, labels: Record<string, string>): Promise<string> {
  const run = await agent.startRun({ framework: 'openai-agents', labels });
  const { verdicts } = await agent.decide(run.run_id, [
    { id: `pay-${amount}`, tool: 'send_invoice', arguments: { to: 'ACME GmbH', amount } },
  ]);
  return verdicts[0]?.approval?.id ?? '';
}

describe('every page of the web UI in chromium', () => {
  it('renders sign-in, inbox, banners, history, runs, a run and not-found in one layout', async () => {
    const agent = new CallgateClient({ url, apiKey: keys.agent });
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.setDefaultTimeout(15_000);

    await page.goto(`${url}/ui/nowhere`);
    expect(await page.locator('h1').textContent()).toBe('Not found');
    await expectLayout(page, false);
    await shot(page, '01-not-found-anonymous.png');

    await page.goto(`${url}/ui/approvals`);
    await page.waitForURL('**/ui/sign-in');
    await expectLayout(page, false);
    await shot(page, '02-sign-in.png');
    await page.fill('input[name=key]', 'cg_not-a-key');
    await page.click('button[type=submit]');
    await page.getByText('That key is not valid.').waitFor();
    await expectLayout(page, false);
    await shot(page, '03-sign-in-refused.png');
    await page.fill('input[name=key]', keys.reviewer);
    await page.click('button[type=submit]');
    await page.waitForURL('**/ui/approvals');

    const toApprove = await ask(agent, 4200, { team: 'billing', ticket: 'INV-17' });
    const toDeny = await ask(agent, 9800, { team: 'billing' });
    const toWithdraw = await ask(agent, 1500, { team: 'ops' });
    const card = page.locator(`article[data-approval-id="${toApprove}"]`);
    await card.waitFor();
    await expect(shown(card.locator('.who'))).resolves.toMatch(
      /^asked by billing-agent via openai-agents team=billing ticket=INV-17$/,
    );
    await expect(shown(card.locator('[data-expires-at]'))).resolves.toMatch(/^\d+ s left$/);
    await expectLayout(page, true);
    await shot(page, '04-inbox.png');

    await card.locator('input[name=reason]').fill('matches the purchase order');
    await card.locator('button.approve').click();
    const approved = page.locator('.flash');
    await approved.waitFor();
    await expect(approved.getAttribute('class')).resolves.toBe('flash approved');
    await expect(shown(approved)).resolves.toMatch(/^✓ Approved send_invoice: approved/);
    await shot(page, '05-approved-banner.png');

    await page.locator(`article[data-approval-id="${toDeny}"] button.deny`).click();
    const denied = page.locator('.flash');
    await expect(denied.getAttribute('class')).resolves.toBe('flash denied');
    await expect(shown(denied)).resolves.toMatch(/^✗ Denied send_invoice: denied/);
    const colours = await page.evaluate(() => {
      const style = getComputedStyle(document.querySelector('.flash') as Element);
      return style.backgroundColor;
    });
    expect(colours).toBe('rgb(180, 35, 24)');
    await shot(page, '06-denied-banner.png');

    await agent.withdrawApproval(toWithdraw, { reason: 'the agent moved on' });
    const toExpire = await ask(agent, 2500, { team: 'ops' });
    now += 10 * 60_000; // past the policy's wait: the next listing expires it
    await page.goto(`${url}/ui/approvals`);
    await page.getByText('No approval is waiting').waitFor();
    await page.click('header nav a[href="/ui/approvals/history"]');
    await page.waitForURL('**/ui/approvals/history');
    const rows = page.locator('table.history tbody tr');
    expect(await rows.count()).toBe(4);
    const statuses = await page.locator('table.history .answer-cell .badge').allInnerTexts();
    expect(statuses.sort()).toEqual(['approved', 'denied', 'expired', 'withdrawn']);
    const approvedRow = page.locator(`tr[data-approval-id="${toApprove}"]`);
    await expect(shown(approvedRow)).resolves.toContain('asked by billing-agent via openai-agents');
    await expect(shown(approvedRow.locator('.answer-cell'))).resolves.toMatch(
      /approved by rita\n.* after \d+(\.\d)? (ms|s)\n“matches the purchase order”/,
    );
    await expect(shown(page.locator(`tr[data-approval-id="${toExpire}"] .answer-cell`))).resolves.toMatch(
      /expired\n.* after 10 min/,
    );
    await expectLayout(page, true);
    await shot(page, '07-history.png');

    await page.click('a.filter.denied');
    await page.waitForURL('**/ui/approvals/history?status=denied');
    expect(await rows.count()).toBe(1);
    await expect(shown(page.locator('a.filter[aria-current]'))).resolves.toMatch(/^denied$/i);
    await page.fill('input[name=tool]', 'nothing-like-this');
    await page.click('.filters button[type=submit]');
    await page.getByText('No approval matches.').waitFor();
    expect(page.url()).toContain('status=denied');
    await shot(page, '08-history-filtered.png');

    await page.click('header nav a[href="/ui/runs"]');
    await page.waitForURL('**/ui/runs');
    expect(await page.locator('tbody tr').count()).toBe(4);
    await expectLayout(page, true);
    await shot(page, '09-runs.png');

    await page.goto(`${url}/ui/runs/${(await agent.getApproval(toApprove)).approval.run_id}`);
    await page.locator('#verification').waitFor();
    await expect(shown(page.locator('.log-key'))).resolves.toMatch(/^test\.local\/server\+[0-9a-f]{8}\+/);
    await expectLayout(page, true);
    await shot(page, '10-run.png');

    const missingRun = await page.goto(`${url}/ui/runs/no-such-run`);
    expect(missingRun?.status()).toBe(404);
    await expect(page.locator('main p').first().textContent()).resolves.toBe('no run no-such-run');
    await expectLayout(page, true);
    await shot(page, '11-run-not-found.png');

    await page.goto(`${url}/ui/no-such-page`);
    expect(await page.locator('h1').textContent()).toBe('Not found');
    await expectLayout(page, true);
    await shot(page, '12-not-found-signed-in.png');
    await page.close();
  }, 90_000);

  it('shows the values the framework injects apart from the model’s arguments, marked as injected', async () => {
    const agent = new CallgateClient({ url, apiKey: keys.agent });
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.setDefaultTimeout(15_000);
    await page.goto(`${url}/ui/sign-in`);
    await page.fill('input[name=key]', keys.reviewer);
    await page.click('button[type=submit]');
    await page.waitForURL('**/ui/approvals');

    const run = await agent.startRun({ framework: 'haystack' });
    const { verdicts } = await agent.decide(run.run_id, [
      {
        id: 'pay-injected',
        tool: 'send_invoice',
        arguments: { to: 'ACME GmbH', amount: 7300 },
        injected: { account_id: 'acct-7', approver_chain: ['cfo'] },
      },
      { id: 'pay-plain', tool: 'send_invoice', arguments: { to: 'Initech', amount: 5100 } },
    ]);
    const [withInjected, plain] = verdicts.map((verdict) => verdict.approval?.id ?? '');
    const card = page.locator(`article[data-approval-id="${withInjected}"]`);
    await card.waitFor();
    await expect(card.locator('pre.arguments').textContent()).resolves.toBe(
      JSON.stringify({ to: 'ACME GmbH', amount: 7300 }, null, 2),
    );
    await expect(shown(card.locator('.injected .source'))).resolves.toMatch(
      /^injected added by the framework, not from the model: the call runs with these too \(account_id, approver_chain\)$/,
    );
    await expect(card.locator('pre.injected-values').textContent()).resolves.toBe(
      JSON.stringify({ account_id: 'acct-7', approver_chain: ['cfo'] }, null, 2),
    );
    // The model's arguments hold none of the injected values.
    await expect(card.locator('pre.arguments').textContent()).resolves.not.toContain('acct-7');
    const plainCard = page.locator(`article[data-approval-id="${plain}"]`);
    await plainCard.waitFor();
    expect(await plainCard.locator('.injected').count()).toBe(0);
    await shot(page, '13-inbox-injected.png');
    await page.close();
  }, 60_000);
});
