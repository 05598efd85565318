import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { WebhookApprovalPort } from './webhook.js';
import { createWebhookReceiver, standardWebhookHeaders, WebhookDeliveryRefused } from './webhook-receiver.js';

const SECRET = 'a-shared-secret-of-the-receiver';
const APPROVAL = {
  id: 'apr-77',
  run_id: 'r',
  call_id: 'c',
  tool: 'send_invoice',
  arguments_digest: `sha256:${'0'.repeat(64)}`,
  rules: [],
  reason: 'why',
  status: 'pending' as const,
  created_at: 0,
  expires_at: 1,
};

describe('approval webhooks carry a signed timestamp; the receiver helper refuses replays', () => {
  it('accepts a real delivery once, and refuses its replay, a changed body and a stale timestamp', async () => {
    const receiver = createWebhookReceiver({ secret: SECRET });
    const captured: Array<{ body: string; headers: Record<string, string> }> = [];
    const outcomes: string[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
        );
        captured.push({ body, headers });
        try {
          outcomes.push(`accepted ${receiver.verify(body, headers).id}`);
        } catch (error) {
          outcomes.push(`refused ${(error as WebhookDeliveryRefused).reason}`);
        }
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const address = server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
    try {
      const port = new WebhookApprovalPort({ url, secret: SECRET });
      await port.request(APPROVAL, { signal: new AbortController().signal });
      expect(outcomes).toEqual(['accepted apr-77']);
      const [delivery] = captured;
      if (!delivery) throw new Error('nothing delivered');
      expect(delivery.headers['webhook-id']).toBe('apr-77');
      expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
      expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);

      // The same request again, byte for byte.
      await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      // The body changed under the same signature.
      await fetch(url, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body.replace('why', 'how'),
      });
      // Signed correctly, but 10 minutes ago.
      const stale = standardWebhookHeaders(SECRET, 'apr-78', delivery.body, new Date(Date.now() - 600_000));
      await fetch(url, {
        method: 'POST',
        headers: { ...stale, 'content-type': 'application/json' },
        body: delivery.body,
      });
      expect(outcomes).toEqual([
        'accepted apr-77',
        'refused replayed',
        'refused signature',
        'refused signature',
      ]);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it('forgets accepted ids after the window, and never accepts a signature made with another secret', () => {
    let now = 1_000_000;
    const receiver = createWebhookReceiver({ secret: SECRET, rememberMs: 1000, clock: () => now });
    const body = JSON.stringify(APPROVAL);
    const headers = standardWebhookHeaders(SECRET, 'apr-1', body);
    expect(receiver.verify(body, headers).id).toBe('apr-77');
    expect(() => receiver.verify(body, headers)).toThrow(WebhookDeliveryRefused);
    now += 1001;
    expect(receiver.verify(body, headers).id).toBe('apr-77');
    const forged = standardWebhookHeaders('another-secret-entirely', 'apr-2', body);
    expect(() => receiver.verify(body, forged)).toThrow(/webhook delivery refused/);
  });
});
