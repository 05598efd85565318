// Reading a POST body within a size limit, the way hono/body-limit holds it (a declared
// Content-Length over the limit is refused unread; a body without one is counted as it streams)
// but without touching `request.body` when the length is declared: @hono/node-server's request
// reads a declared body straight from the socket through `text()`, while `body` builds a
// web-standard Request and stream around it first.

/** What {@link readBody} answers for a body over the limit. */
export const TOO_LARGE = Symbol('too large');

/**
 * The body of `request` as UTF-8 text (RFC 9110 §8.6 Content-Length), or {@link TOO_LARGE} when
 * it is longer than `maxBytes` bytes: declared so (read no further), or counted so while read.
 * @throws Error when the body cannot be read (the client went away).
 */
export async function readBody(request: Request, maxBytes: number): Promise<string | typeof TOO_LARGE> {
  const declared = request.headers.get('content-length');
  if (declared !== null && !request.headers.has('transfer-encoding')) {
    if (Number.parseInt(declared, 10) > maxBytes) return TOO_LARGE;
    return request.text();
  }
  const body = request.body;
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      reader.cancel().catch(() => {});
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
