// MCP Streamable HTTP (MCP 2025-11-25 transports) for the gateway: stateful sessions keyed by
// `Mcp-Session-Id`, each bound to the principal and profile that opened it, served by the SDK's
// web-standard transport. A POST's JSON-RPC requests are tied to the HTTP request, so a client
// that drops the connection cancels them (and withdraws approvals they wait for).
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { isRequest, splitDuplicateIds } from './batch-ids.js';
import { laneServes, laneToolCall, serveLaneCall } from './call-lane.js';
import type { GatewayContext, SessionContext } from './context.js';
import { forWire, restoreDigitsIn, withDigitsRestored, withGateIds, writeJson } from './exact-json.js';
import { parseClientJson } from './json-rpc.js';
import { invalidRequest } from './jsonrpc-errors.js';
import { readBody, TOO_LARGE } from './request-body.js';
import { GatewaySession } from './session.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './stdio-transport.js';

/** Options of the HTTP side of the gateway. */
export interface HttpOptions {
  /** Accepted `Host` header values (host names, with or without port); unset accepts any. */
  allowedHosts?: readonly string[];
  /** Accepted `Origin` header values (e.g. `http://localhost:5173`); unset accepts any. */
  allowedOrigins?: readonly string[];
  /**
   * Largest accepted POST body, in bytes (413 above it), and largest message line of a stdio
   * session (-32600 above it). Default 4 MiB.
   */
  maxBodyBytes?: number;
  /**
   * Serve a plain `tools/call` POST on the tools/call lane (call-lane.ts), without the MCP SDK's
   * server transport, when nothing it needs is missing there. Default true; false serves every
   * request through the SDK (the answers and records are the same).
   */
  toolCallLane?: boolean;
}

const DEFAULT_MAX_BODY = DEFAULT_MAX_MESSAGE_BYTES;

function jsonError(status: number, code: number, message: string, id: unknown = null): Response {
  return new Response(writeJson({ jsonrpc: '2.0', error: { code, message }, id }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

/** The first content coding a Content-Encoding header lists besides `identity`, if any (RFC 9110 §8.4). */
function contentCoding(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const coding of header.split(',')) {
    const name = coding.trim().toLowerCase();
    if (name !== '' && name !== 'identity') return name;
  }
  return undefined;
}

/**
 * How long a POST's event stream may stay silent before its headers are sent anyway, in ms. Long
 * enough that a gateway backed up under load still answers a call in one write (streaming costs
 * three writes and a stream pipe per call, and would make a backlog grow), short enough that a
 * call waiting for a person shows its stream within a second.
 */
const COALESCE_MS = 1_000;

/**
 * A POST answered with an event stream that ends without a second event (the usual tool call:
 * one event, the result) is sent as one buffered body, in one write; a stream still open after
 * its first event or silent for {@link COALESCE_MS} is streamed as it comes. `first` (events
 * the gateway answered itself) goes before the stream's own events; ids and numbers kept with
 * their digits are written as those digits (exact-json.ts).
 */
async function coalesce(response: Response, first = ''): Promise<Response> {
  const body = response.body;
  if (!body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const source = body.getReader();
  const reader = {
    read: async () => {
      const next = await source.read();
      return next.done ? next : { done: false as const, value: restoreDigitsIn(next.value) };
    },
    cancel: (reason: unknown) => source.cancel(reason),
  };
  type Read = Awaited<ReturnType<typeof reader.read>>;
  const chunks: Uint8Array[] = first ? [Buffer.from(first, 'utf8')] : [];
  let pending: Promise<Read> | undefined = reader.read();
  for (let round = 0; round < 2 && pending; round++) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<undefined>((wake) => {
      if (round === 0) timer = setTimeout(() => wake(undefined), COALESCE_MS);
      else setImmediate(() => wake(undefined));
    });
    const next: Read | undefined = await Promise.race([pending, silent]);
    clearTimeout(timer);
    if (!next) break;
    if (next.done) {
      return new Response(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), {
        status: response.status,
        headers: response.headers,
      });
    }
    chunks.push(next.value);
    pending = reader.read();
  }
  const rest = pending;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      const next = await rest;
      if (!next) return;
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(stream, { status: response.status, headers: response.headers });
}

/**
 * The MCP SDK transport's DNS rebinding options (its `allowedHosts` / `allowedOrigins`) for a
 * session opened by `request`. The SDK compares the whole `Host` header; a configured name
 * without a port (`localhost`, `[::1]`) is also listed with the port this request names, so it
 * is accepted on any port, as configured. Unset lists turn the protection off.
 */
interface RebindingOptions {
  enableDnsRebindingProtection?: boolean;
  allowedHosts?: string[];
  allowedOrigins?: string[];
}

function rebindingOptions(options: HttpOptions, request: Request): RebindingOptions {
  const { allowedHosts, allowedOrigins } = options;
  if (!allowedHosts && !allowedOrigins) return {};
  const port = new URL(request.url).port;
  const hosts = allowedHosts?.flatMap((entry) => {
    const named = entry.toLowerCase();
    const hasPort = named.startsWith('[') ? named.includes(']:') : named.includes(':');
    return hasPort || port === '' ? [named] : [named, `${named}:${port}`];
  });
  return {
    enableDnsRebindingProtection: true,
    // An empty list would switch the SDK's check off: refuse every Host instead.
    ...(hosts ? { allowedHosts: hosts.length > 0 ? hosts : [''] } : {}),
    ...(allowedOrigins ? { allowedOrigins: allowedOrigins.length > 0 ? [...allowedOrigins] : [''] } : {}),
  };
}

/**
 * True when `request` passes the DNS rebinding check `options` (from {@link rebindingOptions})
 * asks for, as the SDK's transport checks it: the whole `Host` header listed, an `Origin`, when
 * sent, listed.
 */
function rebindingPasses(options: RebindingOptions, request: Request): boolean {
  if (!options.enableDnsRebindingProtection) return true;
  const { allowedHosts, allowedOrigins } = options;
  if (allowedHosts && allowedHosts.length > 0) {
    const host = request.headers.get('host');
    if (!host || !allowedHosts.includes(host)) return false;
  }
  if (allowedOrigins && allowedOrigins.length > 0) {
    const origin = request.headers.get('origin');
    if (origin && !allowedOrigins.includes(origin)) return false;
  }
  return true;
}

/** True when the policy defines `profile`, or it is the built-in `full`. */
export function knownProfile(context: GatewayContext, profile: string): boolean {
  return profile === 'full' || Object.hasOwn(context.engine.policy.profiles, profile);
}

/** The gateway's Streamable HTTP sessions. */
export class HttpSessions {
  readonly #context: GatewayContext;
  readonly #options: HttpOptions;
  readonly #byId = new Map<
    string,
    {
      session: GatewaySession;
      transport: WebStandardStreamableHTTPServerTransport;
      rebinding: RebindingOptions;
    }
  >();

  constructor(context: GatewayContext, options: HttpOptions) {
    this.#context = context;
    this.#options = options;
  }

  /** Forgets a session that ended. */
  forget(session: GatewaySession): void {
    if (session.sessionId) this.#byId.delete(session.sessionId);
  }

  /**
   * Reads a POST's JSON-RPC body: 415 for a body in a content coding (MCP messages travel
   * uncompressed; read as JSON, gzip bytes would be a parse error and a mislabelled body a guess),
   * 413 over `maxBodyBytes`, 400 -32700 when it is not JSON.
   */
  async #parse(request: Request): Promise<{ body?: unknown; error?: Response }> {
    const coding = contentCoding(request.headers.get('content-encoding'));
    if (coding !== undefined) {
      const error = jsonError(
        415,
        -32000,
        `Unsupported Media Type: Content-Encoding ${JSON.stringify(coding)}: send MCP messages uncompressed`,
      );
      error.headers.set('Accept-Encoding', 'identity');
      return { error };
    }
    let text: string | typeof TOO_LARGE;
    try {
      text = await readBody(request, this.#options.maxBodyBytes ?? DEFAULT_MAX_BODY);
    } catch {
      return { error: jsonError(400, -32000, 'Bad Request: the body could not be read') };
    }
    if (text === TOO_LARGE) {
      const limit = this.#options.maxBodyBytes ?? DEFAULT_MAX_BODY;
      return {
        error: jsonError(413, -32000, `Payload Too Large: the body is over the limit of ${limit} bytes`),
      };
    }
    try {
      // Lossless: big integers keep their digits, a duplicate key is refused (see json-rpc.ts);
      // an id beyond what a double holds stands in as a string until answered (exact-json.ts).
      return { body: withGateIds(parseClientJson(text, this.#options.maxBodyBytes ?? DEFAULT_MAX_BODY)) };
    } catch (error) {
      const detail = error instanceof Error ? error.message.replace(/^message is not valid JSON: /, '') : '';
      return { error: jsonError(400, -32700, `Parse error: Invalid JSON${detail ? ` (${detail})` : ''}`) };
    }
  }

  /**
   * Serves one HTTP request of MCP Streamable HTTP for `context` (authenticated by the caller).
   * A session answers only the principal and profile that opened it (404 otherwise, as for an
   * unknown session).
   */
  handle(request: Request, context: SessionContext): Promise<Response> {
    return this.#serve(request, context);
  }

  async #serve(request: Request, context: SessionContext): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const entry = this.#byId.get(id);
      if (
        !entry ||
        entry.session.principal !== context.principal ||
        entry.session.profile !== context.profile
      ) {
        return jsonError(404, -32001, 'Session not found');
      }
      const { session, transport } = entry;
      session.lastActive = Date.now();
      if (request.method === 'POST') {
        const { body, error } = await this.#parse(request);
        if (error) return error;
        const call = this.#options.toolCallLane === false ? undefined : laneToolCall(body);
        // A foreign Host or Origin goes on to the SDK's transport, which refuses it (403).
        if (
          call &&
          !session.requestInProgress(call.id) &&
          laneServes(session, request) &&
          rebindingPasses(entry.rebinding, request)
        )
          return serveLaneCall(session, request, call);
        const invalid = invalidRequest(body, true);
        if (invalid) return jsonError(400, invalid.error.code, invalid.error.message, invalid.id);
        // Requests sharing an id with another of the batch, or with a call still in progress, are
        // refused, each with its own -32600 (batch-ids.ts).
        const { served, refused } = splitDuplicateIds(Array.isArray(body) ? body : [body], (requestId) =>
          session.requestInProgress(requestId),
        );
        for (const message of served as JSONRPCMessage[]) {
          // Only tool calls wait long enough (approvals) for a dropped connection to matter.
          // Checked above (invalidRequest): a message with a method and an id is a request.
          if ('method' in message && message.method === 'tools/call' && 'id' in message)
            session.watchDisconnect(message.id, request.signal);
          else if ('method' in message && message.method === 'notifications/cancelled') {
            const cancelled = message.params as { requestId?: unknown; reason?: unknown } | undefined;
            session.cancelLane(cancelled?.requestId, cancelled?.reason);
          }
        }
        if (refused.length === 0)
          return coalesce(await transport.handleRequest(request, { parsedBody: body }));
        // (A message alone that was refused left nothing to serve: answered below.)
        if (!served.some(isRequest)) {
          // Nothing left to answer but the refusals: the rest (notifications, responses) is accepted.
          if (served.length > 0) await transport.handleRequest(request, { parsedBody: served });
          return new Response(writeJson(Array.isArray(body) ? refused : refused[0]), {
            status: 200,
            headers: { 'Content-Type': 'application/json', 'mcp-session-id': id },
          });
        }
        const events = refused.map((message) => `event: message\ndata: ${writeJson(message)}\n\n`).join('');
        return coalesce(await transport.handleRequest(request, { parsedBody: served }), events);
      }
      if (request.method !== 'GET') return transport.handleRequest(request);
      // An open standalone stream keeps the session alive until the client drops it.
      const response = withDigitsRestored(await transport.handleRequest(request));
      if (response.status === 200 && !request.signal.aborted) {
        session.streams++;
        request.signal.addEventListener(
          'abort',
          () => {
            session.streams--;
            session.lastActive = Date.now();
          },
          { once: true },
        );
      }
      return response;
    }
    if (request.method !== 'POST')
      return jsonError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (!knownProfile(this.#context, context.profile)) {
      return jsonError(404, -32000, `Not Found: no profile named ${context.profile}`);
    }
    const { body, error } = await this.#parse(request);
    if (error) return error;
    const invalid = invalidRequest(body, true);
    if (invalid) return jsonError(400, invalid.error.code, invalid.error.message, invalid.id);
    const messages = (Array.isArray(body) ? body : [body]) as unknown[];
    if (!messages.some((message) => isInitializeRequest(message))) {
      return jsonError(400, -32000, 'Bad Request: No valid session ID provided');
    }
    const session = new GatewaySession(this.#context, context);
    // The SDK transport refuses a foreign Host or Origin (403) on this and every later request.
    const rebinding = rebindingOptions(this.#options, request);
    const transport = new WebStandardStreamableHTTPServerTransport({
      ...rebinding,
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        session.sessionId = sessionId;
        this.#byId.set(sessionId, { session, transport, rebinding });
      },
    });
    // The SDK writes messages with JSON.stringify: numbers kept with their digits go out as
    // stand-ins, written back as digits by coalesce (exact-json.ts).
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      // A request answered (or refused before its handler) no longer holds its id.
      const answered = message as { id?: RequestId; method?: unknown };
      if (answered.id !== undefined && answered.method === undefined) session.forgetRequest(answered.id);
      return send(forWire(message) as JSONRPCMessage, options);
    };
    await session.connect(transport);
    const response = withDigitsRestored(await transport.handleRequest(request, { parsedBody: body }));
    // An initialization the transport refused leaves a session nobody can reach: end it.
    if (!session.sessionId) await session.end();
    return response;
  }
}
