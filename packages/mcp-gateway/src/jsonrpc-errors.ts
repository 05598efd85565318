// JSON-RPC 2.0 errors for what never reaches a handler: a line or body that is not JSON (-32700
// Parse error), JSON that is not a JSON-RPC message (-32600 Invalid Request), a batch on stdio
// (-32600: MCP 2025-06-18 removed batches, and the stdio transport never took them), and a request
// whose params do not fit its method (-32602 Invalid params, saying which field and why, instead
// of the SDK's -32603 with a raw validation dump). https://www.jsonrpc.org/specification §5.1
import { Transform, type TransformCallback } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ClientRequestSchema,
  ErrorCode,
  JSONRPCErrorResponseSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { isLosslessNumber } from 'lossless-json';
import { isStandIn, withGateIds, writeJson } from './exact-json.js';
import { parseClientJson } from './json-rpc.js';
import { idOfCutMessage, type LineRead, LineSplitter, overLimitMessage } from './line-splitter.js';
import { isPlainJsonRpcMessage, isPlainToolCall } from './message-shape.js';

/** A JSON-RPC error response object. */
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

type RequestSchema = (typeof ClientRequestSchema.options)[number];

const REQUEST_SCHEMAS = new Map<string, RequestSchema>(
  ClientRequestSchema.options.map((schema) => [String(schema.shape.method.value), schema]),
);

function errorResponse(id: unknown, code: number, message: string): JsonRpcErrorResponse {
  return {
    jsonrpc: '2.0',
    id: typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null,
    error: { code, message },
  };
}

/**
 * The -32600 answer for a parsed value that is not one JSON-RPC message, or undefined when it
 * is one. `allowBatch`: an array of messages is fine (HTTP); each element is checked.
 */
export function invalidRequest(value: unknown, allowBatch: boolean): JsonRpcErrorResponse | undefined {
  if (Array.isArray(value)) {
    if (!allowBatch)
      return errorResponse(null, ErrorCode.InvalidRequest, 'Invalid Request: batches are not supported');
    if (value.length === 0)
      return errorResponse(null, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch');
    for (const item of value) {
      const refused = invalidRequest(item, false);
      if (refused) return refused;
    }
    return undefined;
  }
  if (isPlainJsonRpcMessage(value) || JSONRPCMessageSchema.safeParse(value).success) return undefined;
  if (typeof value !== 'object' || value === null)
    return errorResponse(
      null,
      ErrorCode.InvalidRequest,
      `Invalid Request: expected a JSON-RPC object, got ${value === null ? 'null' : typeof value}`,
    );
  const record = value as Record<string, unknown>;
  const badId = idProblem(record);
  return errorResponse(
    badId ? null : record.id,
    ErrorCode.InvalidRequest,
    `Invalid Request: ${badId ?? messageProblem(record)}`,
  );
}

/** A number as sent (its digits when kept as digits). */
const numberText = (value: unknown): string =>
  isLosslessNumber(value) ? value.value : isStandIn(value) ? 'a number' : String(value);

/**
 * Why the `id` of `record` is refused, or undefined when it is absent, a string or an integer.
 * JSON-RPC 2.0 §4: a number id SHOULD NOT have a fractional part; the gateway refuses one
 * (`1.5`, `1e-400`, `1000.00000000000001`), on every transport alike.
 */
function idProblem(record: Record<string, unknown>): string | undefined {
  if (!('id' in record)) return undefined;
  const id = record.id;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  if (isLosslessNumber(id) || (typeof id === 'number' && Number.isFinite(id)))
    return `"id" must be a string or an integer, got ${numberText(id)}: a number id with a fractional part is refused (JSON-RPC 2.0 §4)`;
  const kind = id === null ? 'null' : Array.isArray(id) ? 'an array' : `a ${typeof id}`;
  return `"id" must be a string or an integer, got ${kind}`;
}

/**
 * What is wrong with `record`, a JSON-RPC object the SDK's schemas refuse: the first few
 * problems of the schema of the kind it looks like (request, notification, result or error
 * response), each as `path: reason`; or a general hint when it looks like none.
 */
function messageProblem(record: Record<string, unknown>): string {
  if (record.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
  const schema =
    typeof record.method === 'string'
      ? 'id' in record
        ? JSONRPCRequestSchema
        : JSONRPCNotificationSchema
      : 'result' in record
        ? JSONRPCResultResponseSchema
        : 'error' in record
          ? JSONRPCErrorResponseSchema
          : undefined;
  const checked = schema?.safeParse(record);
  if (!checked || checked.success)
    return 'not a request, notification or response (check "method", "id", "params")';
  return checked.error.issues
    .slice(0, 3)
    .map((issue) => `${issuePath(issue.path) || 'message'}: ${issue.message}`)
    .join('; ');
}

/** A zod issue path as a JSON path: `params._meta.progressToken`, `params.items[0]`. */
const issuePath = (path: readonly PropertyKey[]): string =>
  path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./, '');

/** The answer for one stdio line: -32700 or -32600, or undefined when the line is a message. */
export function refuseLine(
  line: string,
  maxBytes = Number.POSITIVE_INFINITY,
): JsonRpcErrorResponse | undefined {
  // Read as the transport will (losslessly, ids and tokens made ready for the SDK's schemas), so
  // what passes here is what the transport accepts. Text the strict reader refuses (not JSON, a
  // duplicate or `__proto__` key, nesting too deep) is a parse error first, whatever its shape.
  let exact: unknown;
  try {
    exact = withGateIds(parseClientJson(line, maxBytes));
  } catch (error) {
    let reason = (error as Error).message;
    try {
      JSON.parse(line);
    } catch (syntax) {
      reason = (syntax as Error).message;
    }
    return errorResponse(null, ErrorCode.ParseError, `Parse error: ${reason}`);
  }
  return invalidRequest(exact, false);
}

/** The -32602 answer for a request whose params do not fit its method's schema, else undefined. */
export function invalidParams(message: JSONRPCMessage): JsonRpcErrorResponse | undefined {
  if (!('method' in message) || !('id' in message) || isPlainToolCall(message)) return undefined;
  const schema = REQUEST_SCHEMAS.get(message.method);
  if (!schema) return undefined;
  const checked = schema.safeParse(message);
  if (checked.success) return undefined;
  const problems = checked.error.issues.slice(0, 3).map((issue) => {
    const path = issue.path
      .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
      .join('');
    return `${path.replace(/^\./, '') || 'request'}: ${issue.message}`;
  });
  return errorResponse(message.id, ErrorCode.InvalidParams, `Invalid params: ${problems.join('; ')}`);
}

/**
 * Makes `transport` answer -32602 itself for requests whose params do not fit their method, before
 * the protocol layer sees them. Call it after the server connected (the server sets `onmessage`).
 */
export function answerInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    const refused = invalidParams(message);
    if (!refused) {
      deliver(message, extra);
      return;
    }
    void transport.send(refused as JSONRPCMessage).catch(() => undefined);
  };
}

/** True when `JSON.parse` reads `line` as one JSON-RPC message (the SDK's schemas accept it). */
function plainlyMessage(line: string): boolean {
  try {
    return invalidRequest(JSON.parse(line), false) === undefined;
  } catch {
    return false;
  }
}

/**
 * The -32600 answer for a message over the size limit, addressed to its request when its id can
 * be read from its start or end (line-splitter.ts), else to null.
 */
export function overLimitAnswer(head: string, tail: string, maxBytes: number): JsonRpcErrorResponse {
  return errorResponse(
    idOfCutMessage(head, tail) ?? null,
    ErrorCode.InvalidRequest,
    `Invalid Request: ${overLimitMessage('a message', maxBytes)}`,
  );
}

/**
 * A stream between stdin and the stdio transport: each line that is a JSON-RPC message of at
 * most `maxBytes` bytes passes unchanged; any other line is answered through `reply` (one JSON
 * line, -32700 or -32600) and dropped — a line over the limit without ever being held whole
 * (its bytes are dropped as they come until its newline). Blank lines pass (the transport skips
 * them).
 * @param maxBytes the largest line, in bytes (the gateway's `maxBodyBytes`, as for HTTP bodies).
 */
export function jsonRpcLineFilter(reply: (line: string) => void, maxBytes: number): Transform {
  const lines = new LineSplitter(maxBytes);
  const check = (read: LineRead): string => {
    if ('overLimit' in read) {
      reply(`${writeJson(overLimitAnswer(read.overLimit.head, read.overLimit.tail, maxBytes))}\n`);
      return '';
    }
    const text = read.line;
    if (text.trim() === '') return `${text}\n`;
    // What `JSON.parse` reads as a message passes at its cost; the transport reads it
    // losslessly and answers with `refuseLine` should that reading refuse it (an id of 1e-400).
    const refused = plainlyMessage(text) ? undefined : refuseLine(text, maxBytes);
    if (!refused) return `${text}\n`;
    reply(`${writeJson(refused)}\n`);
    return '';
  };
  return new Transform({
    transform(chunk: Buffer | string, encoding, callback: TransformCallback) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
      callback(null, lines.push(bytes).map(check).join(''));
    },
    flush(callback: TransformCallback) {
      callback(null, lines.end().map(check).join(''));
    },
  });
}
