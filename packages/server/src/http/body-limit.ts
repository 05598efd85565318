// Request body size limits: a declared Content-Length over the limit is refused before any byte
// is read (the HTTP parser holds the body to it); a body of unknown length is counted as it
// arrives, with Hono's `bodyLimit` middleware, and refused as soon as it passes the limit.
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
 * A body with a declared Content-Length (and no Transfer-Encoding) is judged by that header
 * alone and left unread, so {@link readUtf8} later reads it straight from the connection: Node's
 * HTTP parser delivers exactly the declared bytes. `bodyLimit` would first open the body as a
 * web stream (`request.body`), which costs more CPU than the rest of a small API request. A
 * body of unknown length (chunked) goes through `bodyLimit`, which counts it as it arrives.
 *
 * @param limit largest body in bytes.
 * @param answer the 413 answer for the refusal from {@link bodyTooLarge} (the API's error JSON,
 *   the UI's error page).
 */
export function limitBody(
  limit: number,
  answer: (c: Context, error: CallgateError) => Response | Promise<Response>,
): MiddlewareHandler {
  const counted = bodyLimit({ maxSize: limit, onError: (c) => answer(c, bodyTooLarge(limit)) });
  return async function declaredBodyLimit(c, next) {
    const declared = c.req.header('content-length');
    if (declared === undefined || c.req.header('transfer-encoding') !== undefined) return counted(c, next);
    // As `bodyLimit` reads the header: a value that is not a number is left to the HTTP parser.
    if (Number.parseInt(declared, 10) > limit) return answer(c, bodyTooLarge(limit));
    await next();
  };
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
