// The tools/call lane: a session's POST holding one plain JSON-RPC `tools/call` request is served
// without the MCP SDK's server transport and protocol layer (stream mappings, a zod pass over
// the message, a keep-alive timer, request correlation): its message is already read (lossless)
// and checked, so the lane runs the gate (`runToolCall`) and answers as the SDK would — one
// `text/event-stream` event per message (MCP 2025-11-25 Streamable HTTP), written in one piece.
// Whatever needs the SDK (progress, elicitation, sampling, tasks) is left to it: see
// {@link laneToolCall} and {@link laneServes}.
import {
  type JSONRPCMessage,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestExtra } from './context.js';
import { writeJson } from './exact-json.js';
import type { GatewaySession } from './session.js';
import { runToolCall, type ToolCallParams } from './tools.js';

/** The `_meta` key of a request that belongs to a task (MCP 2025-11-25 tasks). */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/**
 * How long the lane holds a silent answer back before its headers are sent anyway, in ms: as
 * the SDK path's coalescing (http.ts), so a call waiting for a person shows its stream within a
 * second.
 */
export const LANE_COALESCE_MS = 1_000;

/** Interval of `: keepalive` comments on a lane stream that is open and silent, in ms (as the SDK's). */
const KEEP_ALIVE_MS = 15_000;

/** A `tools/call` request the lane serves. */
export interface LaneCall {
  id: RequestId;
  params: ToolCallParams;
}

const isObject = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/**
 * The call when `body` (a POST's parsed, checked body) is one `tools/call` request the lane
 * serves, else undefined: `jsonrpc` "2.0" and no member beyond `id`, `method`, `params`; a
 * string (an id beyond 2^53 stands in as one: exact-json.ts) or safe-integer id; params an object with a string `name`, `arguments` absent or an
 * object, no `task`; `_meta`, when given, an object without `progressToken` (progress is
 * relayed by the SDK path) or a related task. Batches are left to the SDK path.
 */
export function laneToolCall(body: unknown): LaneCall | undefined {
  if (!isObject(body) || body.method !== 'tools/call' || body.jsonrpc !== '2.0') return undefined;
  for (const name in body) {
    if (name !== 'jsonrpc' && name !== 'id' && name !== 'method' && name !== 'params') return undefined;
  }
  const id = body.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined;
  const params = body.params;
  if (!isObject(params) || typeof params.name !== 'string' || params.task !== undefined) return undefined;
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isObject(meta) || meta.progressToken !== undefined || meta[RELATED_TASK] !== undefined)
      return undefined;
  }
  return { id, params: params as ToolCallParams };
}

/** True when `header` (Content-Type) is plainly `application/json`, with at most a charset. */
function plainJson(header: string | null): boolean {
  if (!header) return false;
  const type = header.toLowerCase();
  return type === 'application/json' || /^application\/json\s*;\s*charset="?utf-8"?$/.test(type);
}

/**
 * True when the lane may answer `request` of `session` as the SDK's transport would: the session
 * is open; the client accepts both `application/json` and `text/event-stream`, sends plain JSON
 * and names a supported protocol version (or none); the client declared neither elicitation
 * nor sampling (an approval asked through elicitation, and an upstream's requests while the
 * call runs, go through the SDK path). Any other request is the SDK's to answer or refuse.
 * The DNS-rebinding check (Host, Origin) is the caller's.
 */
export function laneServes(session: GatewaySession, request: Request): boolean {
  if (session.ended) return false;
  const headers = request.headers;
  const accept = headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!plainJson(headers.get('content-type'))) return false;
  const version = headers.get('mcp-protocol-version');
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  const capabilities = session.server.getClientCapabilities();
  return !capabilities?.elicitation && !capabilities?.sampling;
}

const encoder = new TextEncoder();

/**
 * One server-sent event holding `message`, as the SDK's transport writes it, with ids and numbers
 * kept with their digits written as those digits (exact-json.ts).
 */
const frame = (message: unknown): string => `event: message\ndata: ${writeJson(message)}\n\n`;

/** The JSON-RPC error response the SDK's protocol layer sends for a handler that threw `error`. */
function errorResponse(id: RequestId, error: unknown): JSONRPCMessage {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isSafeInteger(code) ? (code as number) : -32603,
      message: typeof message === 'string' ? message : 'Internal error',
      ...(data !== undefined ? { data } : {}),
    },
  } as JSONRPCMessage;
}

/**
 * The request's headers and URL as the SDK's `requestInfo` gives them (a record of lower-case
 * names), read from `request` only when asked for: a call reads at most one header.
 */
function lazyRequestInfo(request: Request): RequestExtra['requestInfo'] {
  const source = request.headers;
  const headers = new Proxy({} as Record<string, string>, {
    get: (_target, name) => (typeof name === 'string' ? (source.get(name) ?? undefined) : undefined),
    has: (_target, name) => typeof name === 'string' && source.has(name),
    ownKeys: () => [...source.keys()],
    getOwnPropertyDescriptor: (_target, name) => {
      const value = typeof name === 'string' ? source.get(name) : null;
      return value === null ? undefined : { value, enumerable: true, configurable: true, writable: false };
    },
  });
  let url: URL | undefined;
  return {
    headers,
    get url() {
      url ??= new URL(request.url);
      return url;
    },
  };
}

/**
 * Serves `call` of `session`, carried by `request`, through the gate and answers it: 200
 * `text/event-stream` with the notifications sent while it ran (upstream log messages) and the
 * JSON-RPC response, in one body; a call still silent after {@link LANE_COALESCE_MS} is streamed
 * (headers first, then its events, `: keepalive` comments meanwhile). The ledger records are
 * written before the answer (as `callTool` returns). A client that drops the connection or sends
 * `notifications/cancelled` for the call aborts it (an approval it waits for is withdrawn); no
 * response is written then, and the stream ends.
 */
export function serveLaneCall(session: GatewaySession, request: Request, call: LaneCall): Promise<Response> {
  const { id, params } = call;
  const controller = new AbortController();
  const dropped = request.signal;
  const onDrop = () => controller.abort(dropped.reason);
  if (dropped.aborted) controller.abort(dropped.reason);
  else dropped.addEventListener('abort', onDrop, { once: true });
  session.laneStarted(id, controller);

  const headers: Record<string, string> = {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    ...(session.sessionId ? { 'mcp-session-id': session.sessionId } : {}),
  };
  let held = '';
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const write = (text: string) => {
    if (!stream) {
      held += text;
      return;
    }
    try {
      stream.enqueue(encoder.encode(text));
    } catch {
      // The client is gone; the call is aborted by `dropped`.
    }
  };

  const extra = {
    signal: controller.signal,
    requestId: id,
    ...(session.sessionId ? { sessionId: session.sessionId } : {}),
    _meta: params._meta,
    requestInfo: lazyRequestInfo(request),
    sendNotification: async (notification: { method: string; params?: unknown }) => {
      if (!controller.signal.aborted) write(frame({ ...notification, jsonrpc: '2.0' }));
    },
    sendRequest: () =>
      // Not reached: the lane serves only clients that declared neither elicitation nor sampling.
      Promise.reject(new Error('the client offers no requests (no elicitation or sampling)')),
  } as unknown as RequestExtra;

  return new Promise<Response>((resolve) => {
    const timer = setTimeout(() => {
      const body = new ReadableStream<Uint8Array>({
        start(opened) {
          stream = opened;
          if (held) opened.enqueue(encoder.encode(held));
          held = '';
        },
        cancel() {
          clearInterval(keepAlive);
        },
      });
      keepAlive = setInterval(() => write(': keepalive\n\n'), KEEP_ALIVE_MS);
      keepAlive.unref?.();
      resolve(new Response(body, { status: 200, headers }));
    }, LANE_COALESCE_MS);

    runToolCall(session, params, extra)
      .then(
        (result): JSONRPCMessage => ({ result, jsonrpc: '2.0', id }) as JSONRPCMessage,
        (error: unknown) => errorResponse(id, error),
      )
      .then((response) => {
        clearTimeout(timer);
        dropped.removeEventListener('abort', onDrop);
        session.laneEnded(id, controller);
        // A cancelled call gets no response (JSON-RPC: the client no longer waits for one).
        if (!controller.signal.aborted) write(frame(response));
        if (stream) {
          clearInterval(keepAlive);
          try {
            stream.close();
          } catch {
            // Already cancelled by the client.
          }
        } else {
          resolve(new Response(held, { status: 200, headers }));
        }
      });
  });
}
