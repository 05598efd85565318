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
  type JSONRPCMessage,
  JSONRPCMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { withGateIds, writeJson } from './exact-json.js';
import { parseClientJson } from './json-rpc.js';
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
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  const why =
    typeof value !== 'object' || value === null
      ? `expected a JSON-RPC object, got ${value === null ? 'null' : typeof value}`
      : (value as { jsonrpc?: unknown }).jsonrpc !== '2.0'
        ? '"jsonrpc" must be "2.0"'
        : 'not a request, notification or response (check "method", "id", "params")';
  return errorResponse(id, ErrorCode.InvalidRequest, `Invalid Request: ${why}`);
}

/** The answer for one stdio line: -32700 or -32600, or undefined when the line is a message. */
export function refuseLine(line: string): JsonRpcErrorResponse | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return errorResponse(null, ErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
  }
  if (!invalidRequest(value, false)) return undefined;
  // Text the strict reader refuses (a duplicate or `__proto__` key, nesting too deep) is a parse
  // error first, as over HTTP, whatever its shape. Otherwise the lossless reading decides, so the
  // answer carries the id as sent (an id beyond 2^53 stands in until written: exact-json.ts).
  let exact: unknown;
  try {
    exact = withGateIds(parseClientJson(line, Number.POSITIVE_INFINITY));
  } catch (error) {
    return errorResponse(null, ErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
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

/**
 * A stream between stdin and the stdio transport: each line that is a JSON-RPC message passes
 * unchanged; any other line is answered through `reply` (one JSON line, -32700 or -32600) and
 * dropped. Blank lines pass (the transport skips them).
 */
export function jsonRpcLineFilter(reply: (line: string) => void): Transform {
  let pending = '';
  const check = (line: string): string | undefined => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.trim() === '') return `${line}\n`;
    const refused = refuseLine(text);
    if (!refused) return `${line}\n`;
    reply(`${writeJson(refused)}\n`);
    return undefined;
  };
  return new Transform({
    transform(chunk: Buffer | string, _encoding, callback: TransformCallback) {
      pending += chunk.toString();
      let out = '';
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        out += check(pending.slice(0, newline)) ?? '';
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
      callback(null, out);
    },
    flush(callback: TransformCallback) {
      const rest = pending === '' ? '' : (check(pending) ?? '');
      pending = '';
      callback(null, rest);
    },
  });
}
