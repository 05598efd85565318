// The receiving side of callgate's approval webhooks, for the service a webhook posts to. Each
// delivery is signed the Standard Webhooks way (https://www.standardwebhooks.com: `webhook-id`,
// `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), so
// a receiver checks the signature and that the timestamp is recent, and this helper also refuses
// a delivery id it has already accepted (a replay inside the time window).
import type { Approval } from '@callgate/protocol';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** Why a delivery was refused: `signature` (bad or stale), or `replayed` (its id was accepted before). */
export class WebhookDeliveryRefused extends Error {
  readonly reason: 'signature' | 'replayed';
  constructor(reason: 'signature' | 'replayed', message: string) {
    super(message);
    this.name = 'WebhookDeliveryRefused';
    this.reason = reason;
  }
}

/** Options of {@link createWebhookReceiver}. */
export interface WebhookReceiverOptions {
  /** The secret given to callgate's `webhook:` (the same string). */
  secret: string;
  /** Accepted ids are remembered this long, in ms: at least the 5-minute timestamp window. Default 10 min. */
  rememberMs?: number;
  /** Epoch ms. Default `Date.now` (the timestamp window itself uses the system clock). */
  clock?: () => number;
}

/**
 * A verifier of approval deliveries. `verify(body, headers)` returns the approval when the
 * signature is valid, the timestamp within 5 minutes and the delivery id new; otherwise it throws
 * {@link WebhookDeliveryRefused}. A refused replay of a delivery already handled can be answered 2xx.
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): {
  verify(body: string, headers: Headers | Record<string, string>): Approval;
} {
  const webhook = new Webhook(Buffer.from(options.secret, 'utf8'), { format: 'raw' });
  const rememberMs = options.rememberMs ?? 10 * 60_000;
  const clock = options.clock ?? Date.now;
  const seen = new Map<string, number>();
  return {
    verify(body, headers) {
      const plain: Record<string, string> =
        headers instanceof Headers
          ? Object.fromEntries(headers.entries())
          : Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
      let approval: Approval;
      try {
        approval = webhook.verify(body, plain) as Approval;
      } catch (error) {
        if (error instanceof WebhookVerificationError) {
          throw new WebhookDeliveryRefused('signature', `webhook delivery refused: ${error.message}`);
        }
        throw error;
      }
      const now = clock();
      for (const [id, until] of seen) if (until <= now) seen.delete(id);
      const id = plain['webhook-id'] ?? '';
      if (seen.has(id))
        throw new WebhookDeliveryRefused('replayed', `webhook delivery ${id} was already accepted`);
      seen.set(id, now + rememberMs);
      return approval;
    },
  };
}

/** The Standard Webhooks headers of one delivery attempt. */
export function standardWebhookHeaders(
  secret: string,
  id: string,
  body: string,
  at: Date = new Date(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const webhook = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': webhook.sign(id, at, body),
  };
}
