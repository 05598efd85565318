// An upstream's JSON-RPC error told apart from the gateway's own failures to get an answer, and
// passed on to the client as the upstream sent it. The MCP SDK turns both into an `McpError`,
// and its own codes (-32000 ConnectionClosed, -32001 RequestTimeout) lie in the range any
// server may use for its errors (JSON-RPC 2.0 §5.1: -32000 to -32099, "Server error"), so the
// code alone cannot tell them apart: the SDK's own errors are known by their whole shape.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { UPSTREAM_INVALID_JSON } from './json-rpc.js';
import { UPSTREAM_ANSWER_TOO_LARGE } from './stdio-transport.js';

/** The `data.callgate` marks of the errors the gateway makes for an upstream's unusable answer. */
const GATEWAY_MARKS: ReadonlySet<unknown> = new Set([UPSTREAM_INVALID_JSON, UPSTREAM_ANSWER_TOO_LARGE]);

/** The message the SDK's `McpError` was made with (its `message` is prefixed `MCP error <code>: `). */
export function sentMessage(error: McpError): string {
  const prefix = `MCP error ${error.code}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/**
 * True when `error` (from `Upstream.request`) is a JSON-RPC error response the upstream sent;
 * false for anything the gateway or the SDK made itself: a connection that closed (`Connection
 * closed`, no data), a time-out (`Request timed out`, data `{timeout}`), an answer that was not
 * valid JSON or over the size limit, an error that is not an `McpError`.
 */
export function isUpstreamAnswer(error: unknown): error is McpError {
  if (!(error instanceof McpError)) return false;
  const data = error.data as { callgate?: unknown; timeout?: unknown } | undefined;
  if (data !== null && typeof data === 'object' && GATEWAY_MARKS.has(data.callgate)) return false;
  const message = sentMessage(error);
  if (error.code === ErrorCode.ConnectionClosed && message === 'Connection closed' && data === undefined)
    return false;
  if (error.code === ErrorCode.RequestTimeout && message === 'Request timed out') {
    const keys = data !== null && typeof data === 'object' ? Object.keys(data) : [];
    if (keys.length === 1 && typeof data?.timeout === 'number') return false;
  }
  return true;
}

/**
 * An error for an SDK server handler (or the tools/call lane) to throw so that the client's
 * JSON-RPC error is the upstream's own: its `code`, `message` as sent (without the SDK's
 * `MCP error <code>: ` prefix) and `data` (numbers kept with their digits).
 */
export class PassedThroughError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(error: McpError) {
    super(sentMessage(error));
    this.name = 'PassedThroughError';
    this.code = error.code;
    this.data = error.data;
  }
}
