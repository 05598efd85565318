// In-app approvals end to end: the example chat app (examples/ai-sdk-chat: streamText behind a
// route handler, useChat in the page) with a real callgate server process, in real chromium.
// The signed-in user clicks Approve in the page; the call runs once, and the ledger names the
// user as the approval's reviewer. Node 22.
import { CallgateClient, remoteGovernor } from '@callgate/client';
import { launchChromium } from '@callgate/testing/browser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatApp } from '../../../examples/ai-sdk-chat/app.mjs';
import { type ServerProcess, startCallgate } from '../../../test/e2e/server/harness.js';

const USER = 'alice@example.com';

let callgate: ServerProcess;
let browser: Browser;
let app: { url: string; close(): Promise<void> };
const sent: unknown[] = [];

beforeAll(async () => {
  // The server's native modules (better-sqlite3) are built for the Node 20 line, `node`.
  process.env.CALLGATE_NODE ??= 'node';
  callgate = await startCallgate({ keys: { 'chat-app': 'agent', [USER]: 'reviewer' } });
  const client = (key: string) => new CallgateClient({ url: callgate.url, apiKey: key });
  app = await startChatApp({
    governor: remoteGovernor(client(callgate.keys['chat-app'] as string)),
    // The signed-in user's own reviewer key: the server records the key's name as the reviewer.
    reviewerFor: (user: string) => client(callgate.keys[user] as string),
    signIn: USER,
    sendInvoice: (input: unknown) => {
      sent.push(input);
      return { sent: true, ...(input as object) };
    },
  });
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await app?.close();
  expect(await callgate?.stop()).toBe(0);
}, 30_000);

describe('@callgate/ai-sdk in-app approvals with useChat', () => {
  it('the user clicks Approve in the page: the call runs once and the ledger names the user', async () => {
    const page = await browser.newPage();
    const logs: string[] = [];
    page.on('console', (message) => logs.push(`console.${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => logs.push(`page error: ${error.message}`));
    page.on('response', async (response) => {
      if (response.status() >= 400)
        logs.push(`${response.status()} ${response.url()}: ${await response.text().catch(() => '')}`);
    });
    await page.goto(app.url);
    await page.getByLabel('Message').fill('Invoice acme for 5000');
    await page.getByRole('button', { name: 'Send' }).click();
    const approval = page.locator('.approval[data-tool="send_invoice"]');
    await approval.waitFor({ timeout: 20_000 }).catch(async (error) => {
      throw new Error(`${error.message}\n${logs.join('\n')}\n${await page.content()}`);
    });
    expect(sent).toHaveLength(0);
    await approval.getByRole('button', { name: 'Approve' }).click();
    await page.locator('.tool-output').waitFor({ timeout: 20_000 });
    await page.getByText(/^Done: /).waitFor({ timeout: 20_000 });
    expect(sent).toEqual([{ to: 'acme', amount: 5000 }]);

    const reviewer = new CallgateClient({ url: callgate.url, apiKey: callgate.keys[USER] as string });
    const [run] = await reviewer.listRuns({ limit: 1 });
    // The outcome reaches the server when the answer finishes (onFinish flushes the governor),
    // which may be just after the page shows it.
    let records: { type: string; [key: string]: unknown }[] = [];
    for (let attempt = 0; attempt < 50; attempt++) {
      const bundle = await reviewer.exportRun(run?.run_id as string);
      records = bundle.records as { type: string; [key: string]: unknown }[];
      if (records.some((record) => record.type === 'call-end')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(
      records.filter((record) => record.type === 'call-decision').map((record) => record.effect),
    ).toEqual(['ask']);
    expect(
      records
        .filter((record) => record.type === 'approval-response')
        .map((record) => [record.status, record.reviewer]),
    ).toEqual([['approved', USER]]);
    expect(
      records
        .filter((record) => record.type === 'call-end')
        .map((record) => [record.outcome, record.grant_consumed]),
    ).toEqual([['ok', true]]);
    await page.close();
  }, 60_000);
});
