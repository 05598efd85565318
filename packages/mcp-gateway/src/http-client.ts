// The client side of MCP Streamable HTTP (MCP 2025-11-25 transports) the gateway reaches
// upstreams with: POSTs (every JSON-RPC message, tools/call among them) through an undici Pool
// (its `request()` costs the gateway a fraction of node:http's client), the GET and DELETE of the
// session through node:http(s), both over kept-alive connections; server-sent events parsed as
// they arrive (eventsource-parser). It does what the SDK's client transport does for an
// upstream that needs no OAuth: session id, protocol version header, the standalone GET stream,
// resumption after a dropped stream (Last-Event-ID, the server's `retry`), DELETE on close.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { truncateText } from '@callgate/core';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { Pool } from 'undici';
import { writeJson } from './exact-json.js';
import {
  AnswerOverLimit,
  MAX_ERROR_TEXT_BYTES,
  overLimitAnswer,
  readEvents,
  readText,
  type UpstreamAnswer,
} from './http-answers.js';
import { invalidJsonAnswer, parseUpstreamJson } from './json-rpc.js';
import { isPlainJsonRpcMessage } from './message-shape.js';
import { PendingCalls } from './pending-calls.js';
import { DEFAULT_MAX_UPSTREAM_LINE_BYTES } from './stdio-transport.js';

const DEFAULT_RETRY_MS = 1_000;
const MAX_RESUMES = 5;
const MAX_GET_BACKOFF_MS = 30_000;

/** What node:http needs of an upstream's URL to send it a request. */
type RequestTarget = Pick<
  ReturnType<typeof urlToHttpOptions>,
  'protocol' | 'hostname' | 'port' | 'path' | 'auth'
>;

/** `url` as node:http reads it (`urlToHttpOptions`), without the fields a request does not use. */
function requestTarget(url: URL): RequestTarget {
  const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
  return {
    protocol,
    hostname,
    path,
    ...(port !== undefined ? { port } : {}),
    ...(auth !== undefined ? { auth } : {}),
  };
}

/** An upstream answered with an HTTP error. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamHttpError';
  }
}

/** A Streamable HTTP client transport over node:http(s). See the file header. */
export class HttpClientTransport implements Transport {
  readonly #url: URL;
  /**
   * The URL as request options, worked out once (node:http would do it on every request): only
   * what a request uses (protocol, host name, port, path, credentials), as the Agent copies
   * every option it is given on every request.
   */
  readonly #target: RequestTarget;
  readonly #headers: Record<string, string>;
  readonly #agent: HttpAgent;
  /** POSTs go through this pool (one per upstream origin, kept-alive connections). */
  readonly #pool: Pool;
  /** The request target of a POST: the URL's path and query. */
  readonly #path: string;
  /** `Authorization` for credentials in the URL (`user:password@`), as node:http sends them. */
  readonly #authorization?: string;
  readonly #requests = new Set<ReturnType<typeof httpRequest>>();
  #protocolVersion?: string;
  #retryMs = DEFAULT_RETRY_MS;
  #closed = false;
  #delivering: Promise<unknown> = Promise.resolve();
  /** Requests sent by {@link call}. */
  readonly #calls = new PendingCalls();
  sessionId?: string;
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  /** Largest answer read: a JSON body, or one event of a stream (bytes). */
  readonly #maxAnswerBytes: number;

  /**
   * @param url the upstream's MCP endpoint.
   * @param headers sent with every request.
   * @param maxAnswerBytes largest answer read, in bytes: a JSON body, or one event of a stream
   *   (default 16 MiB, as a stdio upstream's answer line). A longer answer to a request is
   *   dropped unread and answered in its place with the error a stdio upstream's gets
   *   (`the upstream answer is over the limit of N bytes`, data `{callgate:
   *   "upstream-answer-too-large"}`).
   */
  constructor(
    url: URL,
    headers: Record<string, string> = {},
    maxAnswerBytes = DEFAULT_MAX_UPSTREAM_LINE_BYTES,
  ) {
    this.#maxAnswerBytes = maxAnswerBytes;
    this.#url = url;
    this.#target = requestTarget(url);
    this.#headers = headers;
    this.#agent =
      url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    // No header or body timeout, as with node:http: a call's time limit is the gateway's
    // (PendingCalls cancels it upstream); an event stream may stay quiet for long.
    this.#pool = new Pool(url.origin, { headersTimeout: 0, bodyTimeout: 0 });
    this.#path = `${url.pathname}${url.search}`;
    if (this.#target.auth) {
      this.#authorization = `Basic ${Buffer.from(this.#target.auth).toString('base64')}`;
    }
  }

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /** The headers of a request: the configured ones, `headers`, then the session's. */
  #requestHeaders(headers: Record<string, string>): Record<string, string> {
    return {
      ...this.#headers,
      ...headers,
      ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}),
      ...(this.#protocolVersion ? { 'mcp-protocol-version': this.#protocolVersion } : {}),
    };
  }

  /**
   * POSTs `body` (a JSON text) through the pool. Not sent again when it fails: undici closes a
   * kept-alive connection before the server's `Keep-Alive: timeout` ends it, and a POST that may
   * have reached the upstream (a tool call) must not run twice.
   */
  async #post(body: string): Promise<UpstreamAnswer> {
    if (this.#closed) throw new Error('the transport is closed');
    const answer = await this.#pool.request({
      path: this.#path,
      method: 'POST',
      headers: {
        ...(this.#authorization !== undefined ? { authorization: this.#authorization } : {}),
        ...this.#requestHeaders({ accept: 'application/json, text/event-stream' }),
        'content-type': 'application/json',
      },
      body,
    });
    return Object.assign(answer.body, { statusCode: answer.statusCode, headers: answer.headers });
  }

  /** Sends a GET or DELETE (no body) through node:http(s). */
  #open(method: string, headers: Record<string, string>, retried = false): Promise<UpstreamAnswer> {
    const send = this.#url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new Error('the transport is closed'));
        return;
      }
      const request = send({
        ...this.#target,
        method,
        agent: this.#agent,
        headers: this.#requestHeaders(headers),
      });
      this.#requests.add(request);
      request.once('close', () => this.#requests.delete(request));
      request.once('response', resolve);
      request.once('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the server closed while idle fails before any answer: the
        // request never reached the server, so it is sent again, once, on a fresh connection.
        if (request.reusedSocket && error.code === 'ECONNRESET' && !retried) {
          this.#open(method, headers, true).then(resolve, reject);
        } else {
          reject(error);
        }
      });
      request.end();
    });
  }

  /**
   * Hands the messages of one event to the client after those of the events before it, each in
   * its own microtask: the SDK's client handles a notification a microtask late, so a progress
   * notification delivered in the same turn as its request's response would find its handler gone.
   */
  #enqueue(data: string, answered?: (ids: Array<string | number>) => void): void {
    this.#delivering = this.#delivering.then(() => {
      const ids = this.#deliver(data);
      answered?.(ids);
    });
  }

  /** Hands each JSON-RPC message in `data` to the client; returns the ids of the responses among them. */
  #deliver(data: string): Array<string | number> {
    let parsed: unknown;
    try {
      // Lossless: numbers keep their digits; a key given twice makes the answer invalid.
      parsed = parseUpstreamJson(data);
    } catch (error) {
      // An answer that is not valid JSON (a bare NaN, a duplicate key) ends its request at once, as an error.
      const answer = invalidJsonAnswer(data, error instanceof Error ? error.message : String(error));
      if (answer && 'id' in answer) {
        this.#hand(answer);
        return [answer.id as string | number];
      }
      this.onerror?.(new Error(`the upstream sent an event that is not JSON: ${String(error)}`));
      return [];
    }
    const answered: Array<string | number> = [];
    for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
      let message: JSONRPCMessage;
      if (isPlainJsonRpcMessage(item)) message = item as JSONRPCMessage;
      else {
        const checked = JSONRPCMessageSchema.safeParse(item);
        if (!checked.success) {
          this.onerror?.(new Error('the upstream sent a message that is not JSON-RPC'));
          continue;
        }
        message = checked.data;
      }
      const value = message as { id?: string | number; method?: string };
      if (value.id !== undefined && value.method === undefined) answered.push(value.id);
      this.#hand(message);
    }
    return answered;
  }

  /** Hands `message` to the {@link call} it answers, else to the client. */
  #hand(message: JSONRPCMessage): void {
    if (!this.#calls.answer(message)) this.onmessage?.(message);
  }

  /** Reads one event stream to its end, handing its messages on (see {@link #follow}). */
  #readEvents(
    incoming: UpstreamAnswer,
    waiting: Set<string | number>,
    onId: (id: string) => void,
  ): Promise<void> {
    return readEvents(
      incoming,
      (event) => {
        if (event.id !== undefined) onId(event.id);
        if (event.event !== 'message' || event.data === '') return;
        this.#enqueue(event.data, (ids) => {
          for (const id of ids) waiting.delete(id);
        });
      },
      (ms) => {
        this.#retryMs = ms;
      },
      this.#maxAnswerBytes,
    );
  }

  /**
   * Reads an event stream until it ends; when it ends before `waiting` (the ids of the requests
   * it answers) are all answered, resumes it with GET and Last-Event-ID.
   */
  async #follow(incoming: UpstreamAnswer, waiting: Set<string | number>): Promise<void> {
    let lastEventId: string | undefined;
    let current = incoming;
    for (let resumes = 0; ; resumes++) {
      try {
        await this.#readEvents(current, waiting, (id) => {
          lastEventId = id;
        });
      } catch (error) {
        if (!(error instanceof AnswerOverLimit)) throw error;
        // The requests this stream was to answer fail at once, with the limit named.
        await this.#delivering;
        for (const id of waiting) this.#hand(overLimitAnswer(id, error));
        waiting.clear();
        return;
      }
      await this.#delivering;
      if (waiting.size === 0 || this.#closed) return;
      if (lastEventId === undefined || resumes >= MAX_RESUMES) {
        throw new Error('the upstream closed its event stream before answering');
      }
      await new Promise((wake) => setTimeout(wake, this.#retryMs));
      current = await this.#open('GET', { accept: 'text/event-stream', 'last-event-id': lastEventId });
      if (current.statusCode !== 200) {
        current.resume();
        throw new UpstreamHttpError(
          current.statusCode ?? 0,
          `resuming the event stream failed: HTTP ${current.statusCode}`,
        );
      }
    }
  }

  /**
   * Sends request `method` with `params` and resolves with its result as the upstream sent it,
   * without the MCP client's protocol layer: what the SDK's `Protocol.request` does for a request
   * without progress, for a fraction of its cost. Messages the upstream sends meanwhile (log
   * messages, its own requests) still go to the client (`onmessage`). `signal` cancels it
   * upstream (`notifications/cancelled`) and rejects with its reason, as an McpError; after
   * `timeoutMs` it is cancelled and rejects with McpError RequestTimeout.
   * @throws McpError the upstream's error response; UpstreamHttpError, Error when it cannot be sent.
   */
  call(
    method: string,
    params: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<Record<string, unknown>> {
    return this.#calls.start(method, params, options, (message) => this.send(message));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const incoming = await this.#post(writeJson(message));
    const session = incoming.headers['mcp-session-id'];
    if (typeof session === 'string' && session) this.sessionId = session;
    const status = incoming.statusCode ?? 0;
    if (status === 202) {
      incoming.resume();
      if ('method' in message && message.method === 'notifications/initialized') this.#listen(0);
      return;
    }
    if (status === 404 && this.sessionId && !('method' in message && message.method === 'initialize')) {
      // The upstream forgot the session (it restarted): the client must connect afresh.
      incoming.resume();
      queueMicrotask(() => this.close().catch(() => {}));
      throw new UpstreamHttpError(status, 'the upstream no longer knows this session');
    }
    if (status < 200 || status >= 300) {
      const text = await readText(incoming, MAX_ERROR_TEXT_BYTES).catch(() => '');
      throw new UpstreamHttpError(
        status,
        `the upstream answered HTTP ${status}${text ? `: ${truncateText(text, 500)}` : ''}`,
      );
    }
    const type = String(incoming.headers['content-type'] ?? '');
    if (type.startsWith('application/json')) {
      let text: string;
      try {
        text = await readText(incoming, this.#maxAnswerBytes);
      } catch (error) {
        if (!(error instanceof AnswerOverLimit) || !('id' in message && 'method' in message)) throw error;
        // The request's answer, dropped unread: the request fails at once, with the limit named.
        this.#enqueue(JSON.stringify(overLimitAnswer(message.id, error)));
        return;
      }
      if (text.trim()) this.#enqueue(text);
      return;
    }
    if (!type.startsWith('text/event-stream')) {
      incoming.resume();
      throw new UpstreamHttpError(status, `the upstream answered with ${type || 'no content type'}`);
    }
    const waiting = new Set<string | number>('id' in message && 'method' in message ? [message.id] : []);
    this.#follow(incoming, waiting).catch((error: Error) => {
      if (!this.#closed) this.onerror?.(error);
    });
  }

  /** The standalone GET stream (server notifications and requests), reopened with a backoff. */
  #listen(attempt: number): void {
    if (this.#closed) return;
    this.#open('GET', { accept: 'text/event-stream' })
      .then(
        async (incoming) => {
          if (incoming.statusCode === 405) {
            incoming.resume();
            return;
          }
          if (incoming.statusCode !== 200) {
            incoming.resume();
            throw new UpstreamHttpError(
              incoming.statusCode ?? 0,
              `the upstream refused its event stream: HTTP ${incoming.statusCode}`,
            );
          }
          await readEvents(
            incoming,
            (event) => {
              if (event.event === 'message' && event.data !== '') this.#enqueue(event.data);
            },
            (ms) => {
              this.#retryMs = ms;
            },
            this.#maxAnswerBytes,
          );
          this.#relisten(0);
        },
        () => this.#relisten(attempt + 1),
      )
      .catch(() => this.#relisten(attempt + 1));
  }

  #relisten(attempt: number): void {
    if (this.#closed) return;
    const delay = Math.min(MAX_GET_BACKOFF_MS, this.#retryMs * 2 ** attempt);
    setTimeout(() => this.#listen(attempt), delay).unref?.();
  }

  /** Ends the session (DELETE, best effort) and every open request. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const session = this.sessionId;
    this.sessionId = undefined;
    if (session) {
      await Promise.race([
        this.#open('DELETE', { 'mcp-session-id': session }).then(
          (incoming) => incoming.resume(),
          () => {},
        ),
        new Promise((wake) => setTimeout(wake, 1_000).unref?.()),
      ]);
    }
    this.#closed = true;
    this.#calls.closeAll();
    for (const request of this.#requests) request.destroy();
    this.#requests.clear();
    this.#agent.destroy();
    await this.#pool.destroy();
    this.onclose?.();
  }
}
