import type { Context } from 'hono';

/**
 * The peer address of a request served by `@hono/node-server` (its socket's `remoteAddress`), or
 * `unknown` when the request did not come over a socket (e.g. `app.request` in tests).
 * Forwarding headers are not trusted: a client can write any of them.
 */
export function clientAddress(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}
