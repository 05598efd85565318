import { createHmac } from 'node:crypto';
import { testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature, WebhookApprovalPort, webhookSignature } from './webhook.js';

describe('webhook approval port', () => {
  it('signs the raw body with HMAC-SHA256', () => {
    const body = '{"id":"apr"}';
    const expected = `sha256=${createHmac('sha256', 'topsecret-topsecret').update(body).digest('hex')}`;
    expect(webhookSignature(body, 'topsecret-topsecret')).toBe(expected);
    expect(verifyWebhookSignature(body, 'topsecret-topsecret', expected)).toBe(true);
    expect(verifyWebhookSignature(`${body} `, 'topsecret-topsecret', expected)).toBe(false);
    expect(verifyWebhookSignature(body, 'topsecret-topsecret', undefined)).toBe(false);
  });

  it('posts each new approval, signed, and the receiver answers through the API', async () => {
    const deliveries: { url: string; headers: Headers; body: string }[] = [];
    let delivered: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      delivered = resolve;
    });
    const fakeFetch = (async (url: string | URL, init?: RequestInit) => {
      deliveries.push({ url: String(url), headers: new Headers(init?.headers), body: String(init?.body) });
      delivered();
      return new Response('ok');
    }) as typeof fetch;
    const secret = 'a-webhook-secret-of-length';
    const { call, keys } = await testApp({
      webhook: { url: 'https://hooks.example/callgate', secret },
      fetch: fakeFetch,
    });
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'pay', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }] },
    });
    await arrived;
    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries;
    expect(delivery?.url).toBe('https://hooks.example/callgate');
    expect(delivery?.headers.get('x-callgate-event')).toBe('approval-request');
    expect(
      verifyWebhookSignature(delivery?.body ?? '', secret, delivery?.headers.get('x-callgate-signature')),
    ).toBe(true);
    const approval = JSON.parse(delivery?.body ?? '{}');
    expect(approval).toMatchObject({
      id: decided.json.verdicts[0].approval.id,
      tool: 'send_invoice',
      status: 'pending',
    });
    const answered = await call('POST', `/v1/approvals/${approval.id}/approve`, {
      key: keys.reviewer,
      body: { reason: 'via webhook' },
    });
    expect(answered.json.approval.status).toBe('approved');
  });

  it('retries a failed delivery and stops once the approval is resolved', async () => {
    let attempts = 0;
    const port = new WebhookApprovalPort(
      { url: 'https://hooks.example/x', secret: 'secret-secret-secret' },
      {
        fetch: (async () => {
          attempts++;
          return new Response('down', { status: 503 });
        }) as typeof fetch,
      },
    );
    const controller = new AbortController();
    const approval = {
      id: 'apr-1',
      run_id: 'r',
      call_id: 'c',
      tool: 't',
      arguments_digest: `sha256:${'0'.repeat(64)}`,
      rules: [],
      reason: 'why',
      status: 'pending' as const,
      created_at: 0,
      expires_at: 1,
    };
    const request = port.request(approval, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    await expect(request).resolves.toBeUndefined();
    expect(attempts).toBe(1);
  });
});
