import { type Engine, type Logger, silentLogger } from '@callgate/core';
import type { Gateway } from '@callgate/mcp-gateway';
import { CallgateError } from '@callgate/protocol';
import type { Tracer } from '@opentelemetry/api';
import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { DEFAULT_MCP_PROFILE } from './config.js';
import { addServerHealth } from './health.js';
import { errorResponseOf, methodNotAllowedResponse } from './http/errors.js';
import { Lifecycle } from './lifecycle.js';
import { mountMetrics } from './metrics.js';
import { openApiDocument } from './openapi.js';
import { PolicyReloader, type PolicySourceReader, policyRoutes } from './policy-reload.js';
import { adminRoutes } from './routes/admin.js';
import { approvalRoutes } from './routes/approvals.js';
import { allowedMethodsFinder, mountRoutes, type Route } from './routes/define.js';
import { ledgerRoutes } from './routes/ledger.js';
import { mountMcp } from './routes/mcp.js';
import { readyRoutes } from './routes/ready.js';
import { runRoutes } from './routes/runs.js';
import { ServerContext } from './server-context.js';
import { mountTracing } from './tracing.js';
import { mountUi, uiErrorResponse } from './ui/routes.js';
import { SESSION_COOKIE, type SessionBacking, SessionStore } from './ui/session.js';
import { attachApprovalPort, WebhookApprovalPort, type WebhookOptions } from './webhook.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** The engine the server fronts; the server never creates or configures one. */
  engine: Engine;
  /** The log's verifier key (C2SP note key `name+id+key`): bundles are verified against it. */
  publicKey: string;
  /** Where the server logs (pino-shaped). Default: silent. */
  logger?: Logger;
  /** POST every new approval, signed, to this URL (see {@link WebhookApprovalPort}). */
  webhook?: WebhookOptions;
  /** Key from which the UI's CSRF tokens are derived. Default: 32 random bytes per process. */
  sessionSecret?: string;
  /** Epoch ms. Default `Date.now`. */
  clock?: () => number;
  /** The `fetch` the webhook posts with (tests). Default: the global one. */
  fetch?: typeof fetch;
  /**
   * The MCP gateway (from `@callgate/mcp-gateway`, on this same engine, already started), served
   * over Streamable HTTP at `/mcp` and `/mcp/<profile>` to agent and admin keys. The server
   * closes it on shutdown, before the engine.
   */
  gateway?: Gateway;
  /** The profile of `/mcp` (a path naming none). Default `full` (every tool). */
  defaultProfile?: string;
  /**
   * Trace requests and records with this tracer (from `startTelemetry`, or any OpenTelemetry
   * tracer); arguments and results go into spans only with `captureContent`.
   */
  tracing?: { tracer: Tracer; captureContent?: boolean };
  /** The data folder: health reports a nearly full disk under it. */
  dataDir?: string;
  /** Reads the policy again (SIGHUP, `POST /v1/admin/policy` without a body policy). */
  policySource?: PolicySourceReader;
  /**
   * Checks the store (e.g. a shared database): returns what is wrong, in words, or undefined when
   * it answers. `GET /v1/health` then answers 503 `gate-unavailable` with that message.
   */
  storeHealth?: () => Promise<string | undefined>;
  /** Keeps signed-in UI sessions beyond this process (replicas share them). Default: none. */
  sessionBacking?: SessionBacking;
}

interface AppInternals {
  server: ServerContext;
  detach: () => void;
  reloader: PolicyReloader;
}

const internals = new WeakMap<Hono, AppInternals>();

/** The server parts of an app made by {@link createApp} (used by `startServer` to shut it down). */
export function appInternals(app: Hono): AppInternals {
  const found = internals.get(app);
  if (!found) throw new CallgateError('internal', 'this Hono app was not made by createApp');
  return found;
}

/** Every API route of the server, in the order the OpenAPI document lists them. */
function apiRoutes(server: ServerContext, reloader: PolicyReloader): Route[] {
  return [
    ...adminRoutes(server),
    ...runRoutes(server),
    ...approvalRoutes(server),
    ...ledgerRoutes(server),
    ...policyRoutes(server, reloader),
    ...readyRoutes(server),
  ];
}

/**
 * The callgate server as a Hono app: the JSON API under `/v1` (OpenAPI 3.1 at
 * `/v1/openapi.json`), the web UI under `/ui`, the MCP gateway at `/mcp` when one is given, and
 * the webhook approval port when configured.
 * Serve it with `startServer`, or call `app.request()` in tests.
 *
 * Every 4xx/5xx of the API is `{"error": {"kind", "message"}}`; the UI answers errors with an
 * HTML page. While the server drains (see `startServer`), requests are refused with 503
 * `gate-unavailable`.
 */
export function createApp(options: AppOptions): Hono {
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? Date.now;
  const lifecycle = new Lifecycle();
  const server = new ServerContext({
    engine: options.engine,
    publicKey: options.publicKey,
    logger,
    clock,
    lifecycle,
    ...(options.gateway ? { gateway: options.gateway } : {}),
    ...(options.storeHealth ? { storeHealth: options.storeHealth } : {}),
  });
  const sessions = new SessionStore({
    clock,
    ...(options.sessionSecret ? { secret: options.sessionSecret } : {}),
    ...(options.sessionBacking ? { backing: options.sessionBacking } : {}),
  });
  const app = new Hono();
  const stopTracing = options.tracing ? mountTracing(app, options.engine, options.tracing) : () => {};
  const metrics = mountMetrics(app, server);
  const removeHealth = addServerHealth(server, options.dataDir ? { dataDir: options.dataDir } : {});
  const reloader = new PolicyReloader(server, {
    defaultProfile: options.defaultProfile ?? DEFAULT_MCP_PROFILE,
    ...(options.policySource ? { read: options.policySource } : {}),
  });
  const routes = apiRoutes(server, reloader);
  const document = openApiDocument(routes);
  const allowedMethods = allowedMethodsFinder([...routes, { method: 'get', path: '/openapi.json' }]);

  app.use('*', async (c, next) => {
    if (lifecycle.draining && c.req.path !== '/v1/health' && c.req.path !== '/v1/ready') {
      const { status, body } = errorResponseOf(
        new CallgateError('gate-unavailable', 'the server is shutting down'),
        logger,
      );
      c.header('connection', 'close');
      return c.json(body, status);
    }
    const leave = lifecycle.enter();
    try {
      await next();
    } finally {
      leave();
    }
    if (lifecycle.draining) c.res.headers.set('connection', 'close');
  });

  app.get('/v1/openapi.json', (c) => c.json(document));
  mountRoutes(app, server, routes);
  if (options.sessionBacking) {
    // A session signed in on another replica is loaded first; sign-ins and sign-outs are kept
    // before the answer leaves.
    app.use('/ui/*', async (c, next) => {
      await sessions.restore(getCookie(c, SESSION_COOKIE));
      await next();
      await sessions.settle();
    });
  }
  mountUi(app, server, sessions);
  if (options.gateway) mountMcp(app, server, options.gateway, options.defaultProfile ?? DEFAULT_MCP_PROFILE);

  app.notFound((c) => {
    const allowed = c.req.path.startsWith('/v1/') ? allowedMethods(c.req.path) : [];
    if (allowed.length > 0) {
      const { status, body, headers } = methodNotAllowedResponse(c.req.method, c.req.path, allowed);
      return c.json(body, status, headers);
    }
    const error = new CallgateError('not-found', `no route ${c.req.method} ${c.req.path}`);
    if (c.req.path.startsWith('/ui')) return uiErrorResponse(c, server, error);
    const { status, body } = errorResponseOf(error, logger);
    return c.json(body, status);
  });
  app.onError((error, c) => {
    if (c.req.path.startsWith('/ui')) return uiErrorResponse(c, server, error);
    const { status, body } = errorResponseOf(error, logger);
    return c.json(body, status);
  });

  let detach = () => {};
  if (options.webhook) {
    const port = new WebhookApprovalPort(options.webhook, {
      logger,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    detach = attachApprovalPort(options.engine, port, logger);
  }
  const detachPort = detach;
  internals.set(app, {
    server,
    detach: () => {
      detachPort();
      metrics.close();
      removeHealth();
      stopTracing();
    },
    reloader,
  });
  return app;
}
