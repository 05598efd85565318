// Request body size limits: a declared Content-Length over the limit is refused before any byte
// is read (the HTTP parser holds the body to it); a body of unknown length is counted as it
// arrives, with Hono's `bodyLimit` middleware, and refused as soon as it passes the limit.
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
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

/** The content codings (RFC 9110 §8.4.1) a request body may be sent in, as `Accept-Encoding` lists them. */
export const ACCEPTED_CONTENT_CODINGS = 'gzip, deflate, br';

type Decoder = (bytes: Uint8Array, options: { maxOutputLength: number }) => Promise<Buffer>;
const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/** The status each body refusal made here answers with, when it is not its kind's (400). */
const refusalStatus = new WeakMap<CallgateError, 413 | 415>();

/**
 * The status a refusal of a request body is answered with: 413 for a body whose decoded content
 * passes the limit, 415 (with `Accept-Encoding`) for a content coding callgate does not decode,
 * undefined for any other error (its kind's status).
 */
export function bodyRefusalStatus(error: unknown): 413 | 415 | undefined {
  return error instanceof CallgateError ? refusalStatus.get(error) : undefined;
}

/**
 * A request body's content as sent before its content codings (RFC 9110 §8.4): `gzip`
 * (`x-gzip`), `deflate` (the zlib format) and `br`, in the order listed, so the last applied is
 * undone first; `identity` or no header leaves the bytes as they are. The decoded content is held
 * to `limit` bytes as it is produced (a small body that inflates past it is refused, not inflated).
 *
 * @param bytes the body as received.
 * @param header the request's Content-Encoding, if any.
 * @param limit largest decoded content in bytes.
 * @throws CallgateError `request-invalid` (path `body`): a coding not in
 *   {@link ACCEPTED_CONTENT_CODINGS} (answered 415), content past `limit` once decoded (413), or
 *   bytes that are not what their coding says (400, naming the coding).
 */
export async function decodeContent(
  bytes: Uint8Array<ArrayBuffer>,
  header: string | undefined,
  limit: number,
): Promise<Uint8Array<ArrayBuffer>> {
  if (header === undefined) return bytes;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let content = bytes;
  for (const coding of codings.reverse()) {
    const decode = DECODERS[coding];
    if (decode === undefined) {
      const error = new CallgateError(
        'request-invalid',
        `body: Content-Encoding ${JSON.stringify(coding)} is not one callgate decodes (${ACCEPTED_CONTENT_CODINGS}, or none)`,
        { path: 'body' },
      );
      refusalStatus.set(error, 415);
      throw error;
    }
    try {
      const decoded = await decode(content, { maxOutputLength: limit });
      content = new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.length) as Uint8Array<ArrayBuffer>;
    } catch (cause) {
      if ((cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        const error = new CallgateError(
          'request-invalid',
          `body: over the limit of ${limit} bytes once its ${coding} coding is undone`,
          { path: 'body' },
          { cause },
        );
        refusalStatus.set(error, 413);
        throw error;
      }
      throw new CallgateError(
        'request-invalid',
        `body: not valid ${coding} content, as its Content-Encoding says (${(cause as Error).message})`,
        { path: 'body' },
        { cause },
      );
    }
  }
  return content;
}

/**
 * A request's body as bytes, its content codings undone ({@link decodeContent}), read within the
 * limit {@link limitBody} holds it to.
 *
 * @param limit largest decoded content in bytes (the route's body limit).
 * @throws CallgateError `request-invalid` (path `body`, {@link bodyNotReceived}) when the
 *   connection ends, resets or runs out of time before the body does; the refusals of
 *   {@link decodeContent}.
 */
export async function readBytes(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = new Uint8Array(await request.arrayBuffer());
  } catch (error) {
    if (error instanceof CallgateError) throw error;
    throw bodyNotReceived(error);
  }
  return decodeContent(bytes, request.headers.get('content-encoding') ?? undefined, limit);
}

/**
 * A request's body as UTF-8 text ({@link readBytes}: its content codings undone, within `limit`).
 *
 * @throws CallgateError `request-invalid` (path `body`) when it is not valid UTF-8, or the
 *   refusals of {@link readBytes}.
 */
export async function readUtf8(request: Request, limit: number): Promise<string> {
  const bytes = await readBytes(request, limit);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CallgateError('request-invalid', 'body: not valid UTF-8', { path: 'body' });
  }
}
