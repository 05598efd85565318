// Reading JSON-RPC the way the gate needs it: client messages losslessly (the digits the client
// sent are the digits the gate sees and quotes), and upstream answers that are not valid JSON
// turned into an immediate error for the request they answer instead of being dropped.
import { CallgateError, parseJsonLossless } from '@callgate/core';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseKeepingDigits, withGateIds } from './exact-json.js';
import { NEEDS_LOSSLESS, parseJsonFast } from './fast-json.js';
import { isPlainJsonRpcMessage } from './message-shape.js';

/** Deepest nesting a client's JSON-RPC message may have. */
export const MESSAGE_MAX_DEPTH = 80;

/** The `data.callgate` of the error that stands for an upstream answer that was not valid JSON. */
export const UPSTREAM_INVALID_JSON = 'upstream-invalid-json';

/**
 * Parses a client's JSON-RPC text losslessly (see core's `parseJsonLossless`): big integers keep
 * their digits, a duplicate key is refused. Text that `JSON.parse` reads to the same value (no
 * number it would round, no repeated key: see `parseJsonFast`) is read by it.
 * @throws CallgateError `tool-args-invalid` saying what is wrong and where.
 */
export function parseClientJson(text: string, maxBytes: number): unknown {
  const fast = parseJsonFast(text, MESSAGE_MAX_DEPTH);
  if (fast !== NEEDS_LOSSLESS) return fast;
  return parseJsonLossless(text, 'message', { maxBytes, maxDepth: MESSAGE_MAX_DEPTH });
}

/**
 * Deepest nesting an upstream's answer may have: far beyond what tools return, shallow enough
 * for the recursive lossless parser.
 */
export const UPSTREAM_MAX_DEPTH = 1_000;

/**
 * Parses an upstream's JSON-RPC text so the client gets what the upstream sent: a number a
 * double cannot hold (an integer beyond ±(2^53−1)) keeps its digits (a lossless-json
 * `LosslessNumber`, written back as those digits: see exact-json.ts, and committed under
 * `callgate-normalize/1`); a key given twice with different values makes the text invalid (the
 * later value would silently win). Text `JSON.parse` reads to the same value is read by it.
 * @throws SyntaxError saying what is wrong and where (nesting deeper than
 *   {@link UPSTREAM_MAX_DEPTH}, a duplicate key, not JSON).
 */
export function parseUpstreamJson(text: string): unknown {
  const fast = parseJsonFast(text, UPSTREAM_MAX_DEPTH);
  if (fast !== NEEDS_LOSSLESS) return fast;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92) index++;
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 123 || code === 91) {
      if (++depth > UPSTREAM_MAX_DEPTH)
        throw new SyntaxError(`nesting deeper than ${UPSTREAM_MAX_DEPTH} at position ${index}`);
    } else if (code === 125 || code === 93) depth--;
  }
  return parseKeepingDigits(text);
}

/**
 * A JSON-RPC message from a line a client sent over stdio, read losslessly and checked; an id
 * kept with its digits stands in as a string while the gate handles it (see exact-json.ts).
 */
export function readClientMessage(line: string, maxBytes: number): JSONRPCMessage {
  const value = withGateIds(parseClientJson(line, maxBytes));
  return isPlainJsonRpcMessage(value) ? (value as JSONRPCMessage) : JSONRPCMessageSchema.parse(value);
}

/** JSON-RPC "Parse error" for a client's text the lossless parser refused (id unknown: null). */
export function parseErrorOf(error: unknown): {
  jsonrpc: '2.0';
  id: null;
  error: { code: number; message: string };
} {
  const message = error instanceof CallgateError ? error.message : String(error);
  return { jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${message}` } };
}

const NON_FINITE = ['-Infinity', 'Infinity', 'NaN'];

/** `text` with the bare tokens NaN, Infinity and -Infinity outside strings replaced by null. */
function withoutNonFinite(text: string): string {
  let out = '';
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (inString) {
      out += char;
      if (char === '\\') out += text[++index] ?? '';
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    const token = inString ? undefined : NON_FINITE.find((candidate) => text.startsWith(candidate, index));
    if (token) {
      out += 'null';
      index += token.length - 1;
    } else out += char;
  }
  return out;
}

/** The id of the request an unparseable upstream answer was for, when it can be read. */
function answeredId(text: string): string | number | undefined {
  try {
    const value = JSON.parse(withoutNonFinite(text)) as { id?: unknown; method?: unknown };
    if (value && typeof value === 'object' && value.method === undefined) {
      if (typeof value.id === 'string' || typeof value.id === 'number') return value.id;
    }
    return undefined;
  } catch {
    const ids = [...text.matchAll(/"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/g)];
    const last = ids.at(-1)?.[1];
    if (last === undefined || /"method"\s*:/.test(text)) return undefined;
    return last.startsWith('"') ? (JSON.parse(last) as string) : Number(last);
  }
}

/**
 * The JSON-RPC error response that stands for an upstream answer that is not valid JSON (e.g. a
 * bare `NaN` token), addressed to the request it answers, so the caller is told at once instead
 * of waiting out the timeout. Undefined when no request id can be read from the text.
 */
export function invalidJsonAnswer(text: string, reason: string): JSONRPCMessage | undefined {
  const id = answeredId(text);
  if (id === undefined) return undefined;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: -32603,
      message: `the upstream answer was invalid JSON: ${reason}`,
      data: { callgate: UPSTREAM_INVALID_JSON },
    },
  };
}
