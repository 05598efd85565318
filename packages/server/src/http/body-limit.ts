// Request body size limits, with Hono's `bodyLimit` middleware: a declared Content-Length over
// the limit is refused before any byte is read (the HTTP parser holds the body to it); a body
// of unknown length is counted as it arrives and refused as soon as it passes the limit.
import { CallgateError } from '@callgate/protocol';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/** The refusal of a body over `limit` bytes (`request-invalid`, path `body`), answered 413. */
export function bodyTooLarge(limit: number): CallgateError {
  return new CallgateError('request-invalid', `body: over the limit of ${limit} bytes`, { path: 'body' });
}

/**
 * A middleware refusing bodies over `limit` bytes (RFC 9110 §15.5.14, 413 Content Too Large).
 *
 * @param answer the 413 answer for the refusal from {@link bodyTooLarge} (the API's error JSON,
 *   the UI's error page).
 */
export function limitBody(
  limit: number,
  answer: (c: Context, error: CallgateError) => Response | Promise<Response>,
): MiddlewareHandler {
  return bodyLimit({ maxSize: limit, onError: (c) => answer(c, bodyTooLarge(limit)) });
}

/**
 * A request's body as UTF-8 text (read within the limit {@link limitBody} holds it to).
 *
 * @throws CallgateError `request-invalid` (path `body`) when it is not valid UTF-8.
 */
export async function readUtf8(request: Request): Promise<string> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CallgateError('request-invalid', 'body: not valid UTF-8', { path: 'body' });
  }
}
