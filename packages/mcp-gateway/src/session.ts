// One MCP session between a client and the gateway: the SDK's low-level `Server` serving it,
// the callgate run it is (framework `mcp`, the principal, labels `profile` and `client`), its
// log level and resource subscriptions. The run starts with the session and ends with it.
import type { ErrorKind } from '@callgate/protocol';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { LoggingLevel, RequestId, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayContext, SessionContext } from './context.js';
import { answerInvalidParams } from './jsonrpc-errors.js';
import { registerPassthrough } from './passthrough.js';
import { registerTools } from './tools.js';
import { GATEWAY_INFO } from './upstream.js';

const LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** Severity rank of an MCP log level (RFC 5424 order, `debug` lowest). */
export function levelRank(level: unknown): number {
  const rank = LEVELS.indexOf(level as LoggingLevel);
  return Math.max(0, rank);
}

/**
 * What the gateway offers every session. Resources, prompts and completions are offered even
 * when no upstream has them yet: upstreams connect, reconnect and change after a session began.
 */
const CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: true },
  logging: {},
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
};

function instructionsOf(context: GatewayContext): string | undefined {
  const parts = context.upstreams
    .filter((upstream) => upstream.instructions)
    .map((upstream) => `## ${upstream.name}\n${upstream.instructions}`);
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

/** One MCP session: a client connected over Streamable HTTP or stdio. */
export class GatewaySession {
  readonly context: GatewayContext;
  readonly identity: SessionContext;
  readonly server: Server;
  /** The MCP session id (Streamable HTTP); undefined over stdio. */
  sessionId?: string;
  /** The level the client set with `logging/setLevel`; undefined until it sets one. */
  logLevel?: LoggingLevel;
  readonly subscriptions = new Set<string>();
  lastActive = Date.now();
  /** Tool calls in progress. */
  busy = 0;
  /** Open standalone SSE streams (HTTP GET). */
  streams = 0;
  readonly #disconnects = new Map<RequestId, AbortSignal>();
  /** Tool calls served by the tools/call lane (see call-lane.ts), by JSON-RPC request id. */
  readonly #laneCalls = new Map<RequestId, AbortController>();
  #run?: Promise<string>;
  #ended?: Promise<void>;

  constructor(context: GatewayContext, identity: SessionContext) {
    this.context = context;
    this.identity = identity;
    const instructions = instructionsOf(context);
    this.server = new Server(GATEWAY_INFO, {
      capabilities: CAPABILITIES,
      ...(instructions ? { instructions } : {}),
    });
    this.server.oninitialized = () => {
      this.runId().catch(() => {});
    };
    this.server.onclose = () => {
      this.end('completed').catch(() => {});
    };
    registerTools(this);
    registerPassthrough(this);
    context.sessionStarted(this);
  }

  get principal(): string {
    return this.identity.principal;
  }

  get profile(): string {
    return this.identity.profile;
  }

  /** True when the client declared form elicitation (MCP 2025-11-25 `elicitation`). */
  get canElicit(): boolean {
    const elicitation = this.server.getClientCapabilities()?.elicitation as
      | { form?: unknown; url?: unknown }
      | undefined;
    if (!elicitation) return false;
    return elicitation.form !== undefined || elicitation.url === undefined;
  }

  /** Connects the session's server to its transport; params that do not fit get -32602. */
  async connect(transport: Transport): Promise<void> {
    await this.server.connect(transport);
    answerInvalidParams(transport);
  }

  /**
   * The session's run id, starting the run on first use (`run-start`: framework `mcp`, the
   * principal, labels `profile` and `client`).
   * @throws CallgateError from the engine when the run cannot start.
   */
  runId(): Promise<string> {
    if (!this.#run && this.#ended) return Promise.reject(new Error('the session has ended'));
    if (!this.#run) {
      const client = this.server.getClientVersion();
      this.#run = this.context.engine
        .startRun({
          principal: this.principal,
          framework: 'mcp',
          labels: { profile: this.profile, client: client?.name ?? 'unknown' },
        })
        .then((run) => run.run_id);
      this.#run.catch((error) =>
        this.context.logger.error(
          { principal: this.principal, error: String(error) },
          'could not start the session run',
        ),
      );
    }
    return this.#run;
  }

  /** Aborts when the HTTP request carrying JSON-RPC request `id` is dropped by the client. */
  watchDisconnect(id: RequestId, signal: AbortSignal): void {
    this.#disconnects.set(id, signal);
  }

  /** The signal that aborts when the client cancels request `id` or drops its connection. */
  requestSignal(id: RequestId, cancelled: AbortSignal): AbortSignal {
    const disconnect = this.#disconnects.get(id);
    if (!disconnect || cancelled.aborted) return cancelled;
    if (disconnect.aborted) return disconnect;
    // Two listeners on one controller: what AbortSignal.any does, at a fraction of its cost.
    const either = new AbortController();
    const abort = function (this: AbortSignal) {
      either.abort(this.reason);
    };
    cancelled.addEventListener('abort', abort, { once: true });
    disconnect.addEventListener('abort', abort, { once: true });
    return either.signal;
  }

  /**
   * True when a `tools/call` of this session with request id `id` is still being served (through
   * the SDK, or on the lane): a request reusing the id now could not be told apart from it.
   */
  requestInProgress(id: unknown): boolean {
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    return this.#disconnects.has(id) || this.#laneCalls.has(id);
  }

  /** Forgets what {@link watchDisconnect} registered for `id` (its request was answered). */
  forgetRequest(id: RequestId): void {
    this.#disconnects.delete(id);
  }

  /** Registers a tool call the lane serves, so `notifications/cancelled` can reach it. */
  laneStarted(id: RequestId, controller: AbortController): void {
    this.#laneCalls.set(id, controller);
  }

  /** Forgets a lane call that was answered (only when `controller` is still the one registered). */
  laneEnded(id: RequestId, controller: AbortController): void {
    if (this.#laneCalls.get(id) === controller) this.#laneCalls.delete(id);
  }

  /**
   * Cancels the lane call with request id `id` (the client sent `notifications/cancelled`, MCP
   * 2025-11-25 cancellation); a call the lane does not serve is left to the SDK's protocol layer.
   */
  cancelLane(id: unknown, reason: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    this.#laneCalls.get(id)?.abort(reason);
  }

  /**
   * Records a passed-through exchange in the session's run (`mcp-exchange`); a failure to
   * record is logged, never thrown (the exchange already happened).
   */
  async recordExchange(exchange: {
    method: string;
    upstream: string;
    target?: string | null;
    params: unknown;
    result?: unknown;
    error_kind?: ErrorKind;
  }): Promise<void> {
    try {
      await this.context.engine.recordExchange(await this.runId(), exchange);
    } catch (error) {
      this.context.logger.error(
        { method: exchange.method, error: String(error) },
        'could not record an MCP exchange',
      );
    }
  }

  /** Sends a notification to the client, ignoring a client that is gone. */
  notify(method: string, params?: Record<string, unknown>): void {
    this.server.notification({ method, ...(params ? { params } : {}) } as never).catch(() => {});
  }

  /**
   * Ends the session's run (`run-end`, calls never completed recorded as such) and forgets the
   * session. Idempotent.
   */
  end(status: 'completed' | 'cancelled' = 'completed'): Promise<void> {
    if (!this.#ended) {
      this.#ended = (async () => {
        this.context.sessionEnded(this);
        if (this.#run) {
          try {
            await this.context.engine.endRun(await this.#run, status);
          } catch (error) {
            this.context.logger.warn(
              { principal: this.principal, error: String(error) },
              'could not end the session run',
            );
          }
        }
        // As the SDK's protocol layer aborts its handlers when the server closes, after the run ended.
        for (const controller of this.#laneCalls.values()) controller.abort(new Error('the session ended'));
        this.#laneCalls.clear();
        await this.server.close().catch(() => {});
      })();
    }
    return this.#ended;
  }

  get ended(): boolean {
    return this.#ended !== undefined;
  }
}
