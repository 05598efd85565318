import { CallgateError } from '@callgate/protocol';
import type { z } from 'zod';

/** Largest JSON body the API accepts, in bytes: 1 MiB of arguments plus room for the envelope. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024 + 64 * 1024;

/** Largest bundle `POST /v1/verify` accepts, in bytes. */
export const DEFAULT_BUNDLE_LIMIT = 64 * 1024 * 1024;

/** `where` followed by a JSON path in dotted form with `[i]` for array items (`body.calls[0].tool`). */
export function formatPath(where: string, path: readonly PropertyKey[]): string {
  let text = where;
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) text += `.${key}`;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text;
}

function tooLarge(limit: number): CallgateError {
  return new CallgateError('request-invalid', `body: over the limit of ${limit} bytes`, { path: 'body' });
}

/**
 * Reads a request body as UTF-8 text, refusing it as soon as it passes `limit` bytes (whether or
 * not a Content-Length was sent).
 *
 * @throws CallgateError `request-invalid` (path `body`) when it is too large or not UTF-8.
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  let bytes: Uint8Array;
  if (declared !== null && /^\d+$/.test(declared)) {
    // HTTP framing holds the body to its Content-Length: read it whole (the adapter's fast path).
    bytes = new Uint8Array(await request.arrayBuffer());
  } else {
    bytes = await readLimited(request, limit);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CallgateError('request-invalid', 'body: not valid UTF-8', { path: 'body' });
  }
}

/** Reads a body of unknown length chunk by chunk, refusing it as soon as it passes `limit` bytes. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Parses a JSON request body. An empty body reads as `{}` (every body field is then absent).
 *
 * @throws CallgateError `request-invalid` (path `body`) when the Content-Type is not JSON or the
 *   text is not JSON; the message gives the parser's position.
 */
export function parseJsonBody(text: string, contentType: string | undefined): unknown {
  if (text.trim() === '') return {};
  if (contentType !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType.trim())) {
    throw new CallgateError(
      'request-invalid',
      `body: expected Content-Type application/json, got ${contentType}`,
      {
        path: 'body',
      },
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CallgateError('request-invalid', `body: malformed JSON: ${(error as Error).message}`, {
      path: 'body',
    });
  }
}

/**
 * Validates `value` with `schema`.
 *
 * @param where what the value is, for messages: `body` or `query`.
 * @returns the parsed value.
 * @throws CallgateError `request-invalid` whose message names the offending field path (e.g.
 *   `body.calls[0].tool: expected string, received number`) and whose `details.path` holds it.
 */
export function parseWith<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  where: string,
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw new CallgateError('request-invalid', `${where}: invalid`, { path: where });
  if (issue.code === 'unrecognized_keys') {
    const path = formatPath(where, [...issue.path, issue.keys[0] ?? '']);
    const names = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    throw new CallgateError(
      'request-invalid',
      `${path}: unknown field${issue.keys.length > 1 ? `s ${names}` : ''}`,
      {
        path,
      },
    );
  }
  const path = formatPath(where, issue.path);
  const message = issue.message.replace(/^Invalid input: /, '');
  throw new CallgateError('request-invalid', `${path}: ${message}`, { path });
}
