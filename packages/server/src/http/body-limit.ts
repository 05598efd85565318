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
 * Whether `error` is a request body that did not arrive whole: {@link bodyNotReceived}'s refusal.
 */
export function isBodyNotReceived(error: unknown): boolean {
  return error instanceof CallgateError && notReceived.has(error);
}

/** The refusals {@link bodyNotReceived} made (marked here, not on the wire). */
const notReceived = new WeakSet<CallgateError>();

/**
 * The refusal of a body the client stopped sending (its connection closed, reset or ran out of
 * time): the client's problem, answered 400 (`request-invalid`, path `body`) when the connection
 * can still take an answer, and logged as such, without a stack (see {@link isBodyNotReceived}).
 */
export function bodyNotReceived(cause: unknown): CallgateError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const error = new CallgateError(
    'request-invalid',
    `body: not received whole (the connection ended before it did: ${reason})`,
    { path: 'body' },
    { cause },
  );
  notReceived.add(error);
  return error;
}

/**
 * A request's body as bytes (read within the limit {@link limitBody} holds it to).
 *
 * @throws CallgateError `request-invalid` (path `body`, {@link bodyNotReceived}) when the
 *   connection ends, resets or runs out of time before the body does.
 */
export async function readBytes(request: Request): Promise<Uint8Array<ArrayBuffer>> {
  try {
    return new Uint8Array(await request.arrayBuffer());
  } catch (error) {
    if (error instanceof CallgateError) throw error;
    throw bodyNotReceived(error);
  }
}

/**
 * A request's body as UTF-8 text (read within the limit {@link limitBody} holds it to).
 *
 * @throws CallgateError `request-invalid` (path `body`) when it is not valid UTF-8, or when it
 *   did not arrive whole ({@link readBytes}).
 */
export async function readUtf8(request: Request): Promise<string> {
  const bytes = await readBytes(request);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CallgateError('request-invalid', 'body: not valid UTF-8', { path: 'body' });
  }
}
