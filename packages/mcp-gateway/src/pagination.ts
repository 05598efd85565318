// Cursor pagination of the gateway's own lists (MCP 2025-11-25 pagination: an opaque
// `cursor` in, `nextCursor` out; an invalid cursor is a -32602 error).
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

const PREFIX = 'cg1.';

function encode(offset: number): string {
  return PREFIX + Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

function decode(cursor: string): number {
  if (cursor.startsWith(PREFIX)) {
    try {
      const value = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8')) as {
        o?: unknown;
      };
      if (typeof value.o === 'number' && Number.isSafeInteger(value.o) && value.o >= 0) return value.o;
    } catch {
      // fall through to the error below
    }
  }
  throw new McpError(ErrorCode.InvalidParams, 'invalid cursor');
}

/**
 * One page of `items` starting at `cursor` (from the start when absent), at most `pageSize`
 * long, with the cursor of the next page when there is one.
 *
 * @throws McpError InvalidParams (-32602) for a cursor this function did not issue.
 */
export function paginate<T>(
  items: readonly T[],
  cursor: unknown,
  pageSize: number,
): { page: T[]; nextCursor?: string } {
  const start = typeof cursor === 'string' ? decode(cursor) : 0;
  const end = start + pageSize;
  return { page: items.slice(start, end), ...(end < items.length ? { nextCursor: encode(end) } : {}) };
}
