// The governing MCP gateway: upstream MCP servers behind one MCP endpoint, each session a
// callgate run, every tool call through the gate. Served over Streamable HTTP (mounted by the
// server at /mcp and /mcp/<profile>) and over stdio (`callgate mcp --stdio`).
import type { Readable, Writable } from 'node:stream';
import { type Engine, type Logger, silentLogger } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ToolCatalog } from './catalog.js';
import type { UpstreamConfig } from './config.js';
import { type GatewayContext, InFlightRequests, type SessionContext } from './context.js';
import { type HttpOptions, HttpSessions, knownProfile } from './http.js';
import { jsonRpcLineFilter } from './jsonrpc-errors.js';
import { Subscriptions } from './routing.js';
import { GatewaySession, levelRank } from './session.js';
import { DEFAULT_MAX_MESSAGE_BYTES, LosslessStdioServerTransport } from './stdio-transport.js';
import { type Loose, Upstream, type UpstreamEvents, type UpstreamStatus } from './upstream.js';

/** Options of {@link createGateway}. */
export interface GatewayOptions extends HttpOptions {
  /** The engine that decides, records and holds the registry (the server's engine). */
  engine: Engine;
  /** The upstream MCP servers (see `parseUpstreams`). */
  upstreams: readonly UpstreamConfig[];
  logger?: Logger;
  /** Interval of progress notifications while a call waits for an approval, in ms. Default 5,000. */
  progressIntervalMs?: number;
  /** Longest page of the gateway's lists. Default 100. */
  pageSize?: number;
  /** An HTTP session with no request, call or open stream for this long ends, in ms. Default 30 min. */
  sessionIdleMs?: number;
}

/** One upstream's state, as {@link Gateway.status} reports it. */
export interface UpstreamState {
  name: string;
  status: UpstreamStatus;
  error?: string;
  /** The names clients see for its tools. */
  tools: string[];
}

/** A stdio session (`callgate mcp --stdio`). */
export interface StdioConnection {
  /** Resolves when the session ended (stdin closed, or {@link StdioConnection.close}). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** The gateway. See {@link createGateway}. */
export interface Gateway {
  /**
   * Connects every upstream, lists its tools (registered in the engine's registry), resources
   * and prompts, and follows their list changes. An upstream that cannot be reached is
   * reported and retried in the background. Call once, before serving.
   */
  start(): Promise<UpstreamState[]>;
  /**
   * Serves one HTTP request of MCP Streamable HTTP (POST, GET, DELETE; MCP 2025-11-25) for an
   * authenticated `context`. Sessions are stateful (`Mcp-Session-Id`) and bound to the
   * principal and profile that opened them. Never throws for a client's mistake: it answers
   * 4xx with a JSON-RPC error body.
   */
  handleRequest(request: Request, context: SessionContext): Promise<Response>;
  /**
   * Serves one MCP session over stdio (newline-delimited JSON-RPC; default `process.stdin` and
   * `process.stdout`). The session ends when stdin closes.
   * @throws CallgateError `not-found` when the policy has no such profile.
   */
  connectStdio(
    context: SessionContext,
    streams?: { stdin?: Readable; stdout?: Writable },
  ): Promise<StdioConnection>;
  /** The upstreams' states and the names of their tools. */
  status(): UpstreamState[];
  /** Ends every session (their runs end `cancelled`) and stops every upstream. */
  close(): Promise<void>;
}

const looseResult = z.looseObject({});

/**
 * Creates the gateway in front of `options.upstreams`, deciding every tool call with
 * `options.engine`.
 *
 * @example
 * const gateway = createGateway({ engine, upstreams: parseUpstreams(config.upstreams) });
 * await gateway.start();
 * app.all('/mcp/:profile?', (c) =>
 *   gateway.handleRequest(c.req.raw, { principal: key.principal, profile: c.req.param('profile') ?? key.profile }));
 */
export function createGateway(options: GatewayOptions): Gateway {
  const logger = options.logger ?? silentLogger;
  const sessions = new Set<GatewaySession>();
  const inFlight = new InFlightRequests();
  const subscriptions = new Subscriptions();
  const notifyAll = (method: string) => {
    for (const session of sessions) session.notify(method);
  };
  const catalog = new ToolCatalog(options.engine, logger, () =>
    notifyAll('notifications/tools/list_changed'),
  );

  const events: UpstreamEvents = {
    changed(_upstream, what) {
      if (what === 'tools') {
        if (catalog.rebuild(upstreams)) notifyAll('notifications/tools/list_changed');
      } else {
        notifyAll(
          what === 'resources'
            ? 'notifications/resources/list_changed'
            : 'notifications/prompts/list_changed',
        );
      }
    },
    resourceUpdated(upstream, params) {
      for (const session of subscriptions.followers(String(params.uri), upstream)) {
        session.notify('notifications/resources/updated', params);
      }
    },
    log(upstream, params) {
      const route = inFlight.route(upstream);
      if (typeof route === 'string') {
        logger.debug(
          { upstream: upstream.name, level: params.level, data: params.data },
          'upstream log message (no client to relate it to)',
        );
        return;
      }
      const wanted = route.session.logLevel;
      if (wanted && levelRank(params.level) < levelRank(wanted)) return;
      route.extra.sendNotification({ method: 'notifications/message', params } as never).catch(() => {});
    },
    async serverRequest(upstream, request, signal) {
      const route = inFlight.route(upstream);
      if (route === 'none') {
        throw new McpError(
          ErrorCode.InvalidRequest,
          `no client request is in progress on ${upstream.name} to relate ${request.method} to`,
        );
      }
      if (route === 'ambiguous') {
        throw new McpError(
          ErrorCode.InternalError,
          `several clients have requests in progress on ${upstream.name}; the gateway cannot tell which one ${request.method} is for`,
        );
      }
      const { session, extra } = route;
      const capabilities = session.server.getClientCapabilities() ?? {};
      const capability = request.method === 'sampling/createMessage' ? 'sampling' : 'elicitation';
      if (!capabilities[capability]) {
        throw new McpError(ErrorCode.InvalidRequest, `the client does not support ${capability}`);
      }
      try {
        const result = (await extra.sendRequest(request as never, looseResult, {
          signal,
          timeout: upstream.timeoutMs,
        })) as Loose;
        await session.recordExchange({
          method: request.method,
          upstream: upstream.name,
          params: request.params ?? {},
          result,
        });
        return result;
      } catch (error) {
        await session.recordExchange({
          method: request.method,
          upstream: upstream.name,
          params: request.params ?? {},
          result: { error: error instanceof Error ? error.message : String(error) },
          error_kind: 'tool-error',
        });
        throw error;
      }
    },
  };
  const upstreams = options.upstreams.map((config) => new Upstream(config, events, logger));

  const context: GatewayContext = {
    engine: options.engine,
    catalog,
    upstreams,
    logger,
    progressIntervalMs: options.progressIntervalMs ?? 5_000,
    pageSize: options.pageSize ?? 100,
    inFlight,
    subscriptions,
    sessions,
    sessionStarted(session) {
      sessions.add(session);
    },
    sessionEnded(session) {
      sessions.delete(session);
      http.forget(session);
      for (const uri of [...session.subscriptions]) {
        const upstream = subscriptions.remove(uri, session);
        upstream?.request('resources/unsubscribe', { uri }, {}).catch(() => {});
      }
    },
  };
  const http = new HttpSessions(context, options);

  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const session of sessions) {
        if (
          session.sessionId &&
          session.busy === 0 &&
          session.streams === 0 &&
          now - session.lastActive > idleMs
        ) {
          logger.info({ principal: session.principal, session: session.sessionId }, 'idle MCP session ended');
          session.end('cancelled').catch(() => {});
        }
      }
    },
    Math.max(1_000, Math.min(60_000, Math.floor(idleMs / 4))),
  );
  sweep.unref?.();

  return {
    async start() {
      await Promise.all(
        upstreams.map((upstream) =>
          upstream.connect().catch((error) => {
            logger.error(
              { upstream: upstream.name, error: String(error) },
              'upstream could not connect; retrying in the background',
            );
            upstream.retryLater();
          }),
        ),
      );
      catalog.rebuild(upstreams);
      return this.status();
    },

    handleRequest(request, sessionContext) {
      return http.handle(request, sessionContext);
    },

    async connectStdio(sessionContext, streams = {}) {
      if (!knownProfile(context, sessionContext.profile)) {
        throw new CallgateError('not-found', `no profile named ${sessionContext.profile}`);
      }
      const stdin = streams.stdin ?? process.stdin;
      const session = new GatewaySession(context, sessionContext);
      const stdout = streams.stdout ?? process.stdout;
      // Lines that are not JSON-RPC messages get their JSON-RPC error here (the transport drops them).
      const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
      const lines = stdin.pipe(jsonRpcLineFilter((line) => stdout.write(line), maxBytes));
      const transport = new LosslessStdioServerTransport(lines, stdout, maxBytes);
      let resolveClosed: () => void = () => {};
      const closed = new Promise<void>((resolve) => {
        resolveClosed = resolve;
      });
      const end = () => session.end('completed').then(resolveClosed, resolveClosed);
      stdin.once('end', end);
      stdin.once('close', end);
      const previous = session.server.onclose;
      session.server.onclose = () => {
        previous?.();
        void end();
      };
      await session.connect(transport);
      return { closed, close: () => end() };
    },

    status() {
      const names = new Map<Upstream, string[]>();
      for (const tool of catalog.all())
        names.set(tool.upstream, [...(names.get(tool.upstream) ?? []), tool.name]);
      return upstreams.map((upstream) => ({
        name: upstream.name,
        status: upstream.status,
        ...(upstream.error ? { error: upstream.error } : {}),
        tools: names.get(upstream) ?? [],
      }));
    },

    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions].map((session) => session.end('cancelled')));
      await Promise.all(upstreams.map((upstream) => upstream.close()));
      catalog.clear();
    },
  };
}
