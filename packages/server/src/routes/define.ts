import type { ApiKeyRow } from '@callgate/core';
import { CallgateError } from '@callgate/protocol';
import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import {
  ACCEPTED_CONTENT_CODINGS,
  bodyRefusalStatus,
  isBodyNotReceived,
  limitBody,
  readBytes,
  readUtf8,
} from '../http/body-limit.js';
import { errorResponseOf } from '../http/errors.js';
import { precompileSchema } from '../http/precompile.js';
import type { ApiKeyRole } from '../http/schemas.js';
import {
  DEFAULT_BODY_LIMIT,
  parseJsonBody,
  parseWith,
  refuseOtherContentType,
  refuseRepeatedQuery,
} from '../http/validation.js';
import { findApiKey } from '../keys.js';
import type { ServerContext } from '../server-context.js';

/** What a route handler receives: the validated body and query, the path parameters and the key. */
export interface RouteInput<Body, Query> {
  body: Body;
  /** The body's text as received (UTF-8 decoded); empty for a route without a body or with `bodyBytes`. */
  bodyText: string;
  /** The body's bytes as received, unparsed, on a route with `bodyBytes` (else empty). */
  bodyBytes: Uint8Array;
  query: Query;
  params: Record<string, string>;
  /** The authenticated key (a placeholder `public` row on routes without auth). */
  key: ApiKeyRow;
  request: Request;
  /** Aborts when the client goes away or the server shuts down. */
  signal: AbortSignal;
}

/**
 * One API route: its method and path (under `/v1`, Hono syntax), who may call it, its schemas
 * and its handler. The same object registers the route and describes it in the OpenAPI document.
 */
export interface Route<BodySchema extends z.ZodType = z.ZodType, QuerySchema extends z.ZodType = z.ZodType> {
  method: 'get' | 'post' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  /** Roles allowed, or `public` (no key needed). */
  roles: readonly ApiKeyRole[] | 'public';
  body?: BodySchema;
  /** Largest body in bytes; default {@link DEFAULT_BODY_LIMIT}. */
  bodyLimit?: number;
  /**
   * The handler reads the body's bytes itself (`bodyBytes`), unparsed: `body` then only
   * describes it in the OpenAPI document (its Content-Type is still held to JSON).
   */
  bodyBytes?: true;
  query?: QuerySchema;
  /** Success status; default 200. */
  status?: 200 | 201;
  response: z.ZodType;
  /** Error statuses the route may answer with besides 400/401/403 (for the document). */
  errors?: readonly number[];
  /** Returns the JSON answer, or a ready Response. */
  handler(input: RouteInput<z.output<BodySchema>, z.output<QuerySchema>>): Promise<unknown>;
}

/** Types a route (identity; keeps the handler's input typed by the route's schemas). */
export function defineRoute<BodySchema extends z.ZodType, QuerySchema extends z.ZodType>(
  route: Route<BodySchema, QuerySchema>,
): Route {
  return route as unknown as Route;
}

const NO_BYTES = new Uint8Array(0);

const PUBLIC_KEY_ROW: ApiKeyRow = { key_hash: '', name: 'public', role: 'agent', created_at: 0 };

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/**
 * A signal that aborts when either input aborts, made on first use (a Node request's own signal
 * is costly to create, and only long-polls need one); `dispose` removes the listeners.
 */
function lazyLinkedSignal(
  first: () => AbortSignal,
  second: AbortSignal,
): { get: () => AbortSignal; dispose: () => void } {
  let controller: AbortController | undefined;
  let source: AbortSignal | undefined;
  const abort = () => controller?.abort();
  return {
    get() {
      if (controller) return controller.signal;
      controller = new AbortController();
      source = first();
      if (source.aborted || second.aborted) controller.abort();
      source.addEventListener('abort', abort, { once: true });
      second.addEventListener('abort', abort, { once: true });
      return controller.signal;
    },
    dispose() {
      if (!source) return;
      source.removeEventListener('abort', abort);
      second.removeEventListener('abort', abort);
    },
  };
}

function bearerOf(header: string | undefined): string | undefined {
  const match = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * Authenticates a request and checks its role, before anything else is looked up (so a 401 or
 * 403 never reveals whether a resource exists).
 *
 * @throws CallgateError `unauthorized` without a live key, `forbidden` when the key's role may
 *   not call the route.
 */
export async function authorize(
  server: ServerContext,
  route: Pick<Route, 'roles' | 'summary'>,
  header: string | undefined,
): Promise<ApiKeyRow> {
  if (route.roles === 'public') return PUBLIC_KEY_ROW;
  const token = bearerOf(header);
  if (!token) throw new CallgateError('unauthorized', 'send an API key: Authorization: Bearer <key>');
  const key = await findApiKey(server.engine.store, token);
  if (!key) throw new CallgateError('unauthorized', 'the API key is not valid (unknown or revoked)');
  if (!route.roles.includes(key.role)) {
    const article = key.role === 'reviewer' ? 'a' : 'an';
    throw new CallgateError('forbidden', `${article} ${key.role} key may not ${lowerFirst(route.summary)}`);
  }
  return key;
}

/** The JSON error answer for `error` (with `WWW-Authenticate` on a 401). */
export function errorJson(c: Context, server: ServerContext, error: unknown): Response {
  const { status, body } = errorResponseOf(error, server.logger);
  if (status === 401) c.header('WWW-Authenticate', 'Bearer realm="callgate"');
  return c.json(body, status);
}

const METHOD_ORDER = ['get', 'post', 'delete'] as const;

/**
 * For a request path, the methods API routes serve there (upper case, GET before POST before
 * DELETE; empty when no route has that path). It answers what a 405's `Allow` header lists.
 *
 * @param routes the routes, with paths under `/v1` in Hono syntax (`/runs/:id`).
 */
export function allowedMethodsFinder(
  routes: readonly Pick<Route, 'method' | 'path'>[],
): (path: string) => string[] {
  const patterns = routes.map((route) => {
    const source = route.path
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return { method: route.method, pattern: new RegExp(`^/v1${source}$`) };
  });
  return (path) => {
    const found = new Set(patterns.filter(({ pattern }) => pattern.test(path)).map(({ method }) => method));
    return METHOD_ORDER.filter((method) => found.has(method)).map((method) => method.toUpperCase());
  };
}

/**
 * The API's answer to a body over its limit: 413 (RFC 9110 §15.5.14, Content Too Large) with
 * the error JSON (`request-invalid`, `body: over the limit of N bytes`, path `body`).
 */
function tooLargeJson(c: Context, error: CallgateError): Response {
  return c.json(error.toBody(), 413);
}

/**
 * Registers `routes` on `app` under `/v1`: a body over the route's limit first (413), then auth
 * and role, then query (a parameter given twice is refused, on every route), then body, then the
 * handler. Each route's schemas are compiled here, once, not on its first request.
 */
export function mountRoutes(app: Hono, server: ServerContext, routes: readonly Route[]): void {
  for (const route of routes) {
    if (route.query) precompileSchema(route.query);
    if (route.body) precompileSchema(route.body);
    const limit = route.bodyLimit ?? DEFAULT_BODY_LIMIT;
    const handle = async (c: Context) => {
      try {
        const key = await authorize(server, route, c.req.header('authorization'));
        // Every route, with a query schema or not: a parameter given twice is refused.
        refuseRepeatedQuery(c.req.url);
        const query = route.query ? parseWith(route.query, c.req.query(), 'query') : {};
        let body: unknown = {};
        let bodyText = '';
        let bodyBytes = NO_BYTES;
        if (route.body && route.bodyBytes) {
          bodyBytes = await readBytes(c.req.raw, limit);
          if (bodyBytes.length > 0) refuseOtherContentType(c.req.header('content-type'));
        } else if (route.body) {
          bodyText = await readUtf8(c.req.raw, limit);
          body = parseWith(route.body, parseJsonBody(bodyText, c.req.header('content-type'), limit), 'body');
        }
        const linked = lazyLinkedSignal(() => c.req.raw.signal, server.lifecycle.signal);
        let result: unknown;
        try {
          result = await route.handler({
            body,
            bodyText,
            bodyBytes,
            query,
            params: c.req.param(),
            key,
            request: c.req.raw,
            get signal() {
              return linked.get();
            },
          });
        } finally {
          linked.dispose();
        }
        if (result instanceof Response) return result;
        return c.json(result as object, route.status ?? 200);
      } catch (error) {
        // A client that went away or was too slow (408) is the client's problem, not the server's.
        if (isBodyNotReceived(error))
          server.logger.info(
            { method: c.req.method, path: c.req.path, error: (error as CallgateError).message },
            'request body not received',
          );
        const status = bodyRefusalStatus(error);
        if (status === 415) c.header('Accept-Encoding', ACCEPTED_CONTENT_CODINGS);
        if (status !== undefined) return c.json((error as CallgateError).toBody(), status);
        return errorJson(c, server, error);
      }
    };
    const method = route.method.toUpperCase();
    // A body over the limit is refused before anything else (before it is read, when declared).
    if (route.body) app.on(method, `/v1${route.path}`, limitBody(limit, tooLargeJson), handle);
    else app.on(method, `/v1${route.path}`, handle);
  }
}
