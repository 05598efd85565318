import { createHmac, timingSafeEqual } from 'node:crypto';
import { type ApprovalPort, type Engine, type Logger, silentLogger } from '@callgate/core';
import type { Approval, ApprovalResponse } from '@callgate/protocol';
import { standardWebhookHeaders } from './webhook-receiver.js';

/** Where approvals are posted and the secret their signatures are made with. */
export interface WebhookOptions {
  url: string;
  /** The HMAC-SHA256 key; share it with the receiver. */
  secret: string;
}

/** The signature header's value for a raw body: `sha256=<hex HMAC-SHA256(secret, body)>`. */
export function webhookSignature(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** True when `header` is the signature of `body` under `secret` (compared in constant time). */
export function verifyWebhookSignature(
  body: string | Uint8Array,
  secret: string,
  header: string | null | undefined,
): boolean {
  if (!header) return false;
  const expected = Buffer.from(webhookSignature(body, secret));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

const DELAYS_MS = [0, 1_000, 5_000, 15_000];

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms === 0 || signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * An approval port that POSTs each new approval, as JSON, to a URL. The request carries
 * `X-Callgate-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, `X-Callgate-Event:
 * approval-request` and `X-Callgate-Delivery: <approval id>`, and the Standard Webhooks headers
 * (`webhook-id` = the approval id, `webhook-timestamp`, `webhook-signature`; see
 * {@link createWebhookReceiver}, which refuses stale and replayed deliveries). The receiver answers through the
 * API (`POST /v1/approvals/{id}/approve` or `/deny`), so `request` always resolves `undefined`.
 * A failed delivery (network error, a non-2xx answer, 10 s without one) is retried after 1, 5
 * and 15 s unless the approval was resolved meanwhile; then it is logged and given up.
 */
export class WebhookApprovalPort implements ApprovalPort {
  readonly name = 'webhook';
  readonly #options: WebhookOptions;
  readonly #logger: Logger;
  readonly #fetch: typeof fetch;

  constructor(options: WebhookOptions, context: { logger?: Logger; fetch?: typeof fetch } = {}) {
    this.#options = options;
    this.#logger = context.logger ?? silentLogger;
    this.#fetch = context.fetch ?? fetch;
  }

  async request(approval: Approval, context: { signal: AbortSignal }): Promise<ApprovalResponse | undefined> {
    const body = JSON.stringify(approval);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'callgate-webhook/1',
      'x-callgate-event': 'approval-request',
      'x-callgate-delivery': approval.id,
      'x-callgate-signature': webhookSignature(body, this.#options.secret),
    };
    for (const [attempt, delay] of DELAYS_MS.entries()) {
      await sleep(delay, context.signal);
      if (context.signal.aborted) return undefined;
      try {
        const response = await this.#fetch(this.#options.url, {
          method: 'POST',
          // Each attempt is signed at its own time (Standard Webhooks), under the approval's id.
          headers: { ...headers, ...standardWebhookHeaders(this.#options.secret, approval.id, body) },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await response.body?.cancel();
        if (response.ok) return undefined;
        this.#logger.warn(
          { approval_id: approval.id, status: response.status, attempt: attempt + 1 },
          'webhook refused',
        );
      } catch (error) {
        this.#logger.warn(
          { approval_id: approval.id, error: String(error), attempt: attempt + 1 },
          'webhook failed',
        );
      }
    }
    this.#logger.error({ approval_id: approval.id, url: this.#options.url }, 'webhook gave up');
    return undefined;
  }
}

/**
 * Routes every new approval of `engine` to `port`, as the engine's own ports are routed, for an
 * engine created without it: each request's signal aborts when the approval is resolved (or on
 * detach), and an answer the port resolves with is passed to `engine.respondToApproval`.
 * Returns a function that detaches the port.
 */
export function attachApprovalPort(
  engine: Engine,
  port: ApprovalPort,
  logger: Logger = silentLogger,
): () => void {
  const live = new Map<string, AbortController>();
  const unsubscribe = engine.onApproval((approval) => {
    if (approval.status !== 'pending') {
      live.get(approval.id)?.abort();
      live.delete(approval.id);
      return;
    }
    if (live.has(approval.id)) return;
    const controller = new AbortController();
    live.set(approval.id, controller);
    Promise.resolve()
      .then(() => port.request(structuredClone(approval), { signal: controller.signal }))
      .then(async (response) => {
        if (response && !controller.signal.aborted) await engine.respondToApproval(approval.id, response);
      })
      .catch((error) =>
        logger.warn(
          { port: port.name, approval_id: approval.id, error: String(error) },
          'approval port failed',
        ),
      )
      .finally(() => {
        if (live.get(approval.id) === controller) live.delete(approval.id);
      });
  });
  return () => {
    unsubscribe();
    for (const controller of live.values()) controller.abort();
    live.clear();
  };
}
