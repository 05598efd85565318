// Resources, prompts, completions and logging passed through to the upstreams, each exchange
// recorded in the session's run (`mcp-exchange`: method, upstream, target, commitments of the
// parameters and the result). Results go back exactly as the upstream sent them.
import type { ErrorKind } from '@callgate/protocol';
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestExtra } from './context.js';
import { forRecord } from './exact-json.js';
import { paginate } from './pagination.js';
import { promptCatalog, upstreamsForResource } from './routing.js';
import { type GatewaySession, levelRank } from './session.js';
import type { Loose, Upstream } from './upstream.js';
import { isUpstreamAnswer, PassedThroughError } from './upstream-errors.js';

const NO_UPSTREAM = 'callgate';

function names(upstreams: readonly Upstream[]): string {
  return upstreams.map((upstream) => upstream.name).join(',') || NO_UPSTREAM;
}

/** Sends `method` to `upstream`, records the exchange, and passes an upstream error through. */
async function exchange(
  session: GatewaySession,
  upstream: Upstream,
  method: string,
  target: string | null,
  params: Loose,
  extra: RequestExtra,
): Promise<Loose> {
  try {
    const result = await upstream.request(method, params, { signal: extra.signal });
    await session.recordExchange({
      method,
      upstream: upstream.name,
      target,
      params,
      result: forRecord(result),
    });
    return result;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await session.recordExchange({
      method,
      upstream: upstream.name,
      target,
      params,
      result: { error: message },
      error_kind: 'tool-error',
    });
    if (isUpstreamAnswer(error)) throw new PassedThroughError(error);
    if (error instanceof McpError) throw error;
    throw new McpError(ErrorCode.InternalError, `${upstream.name}: ${message}`);
  }
}

async function notFound(
  session: GatewaySession,
  method: string,
  target: string,
  params: Loose,
  what: string,
): Promise<never> {
  const error_kind: ErrorKind = 'not-found';
  await session.recordExchange({
    method,
    upstream: NO_UPSTREAM,
    target,
    params,
    result: { error: what },
    error_kind,
  });
  throw new McpError(ErrorCode.InvalidParams, what);
}

/** Tries each candidate in turn (an upstream that does not know the resource answers with an error). */
async function firstAnswer(
  session: GatewaySession,
  candidates: Upstream[],
  method: string,
  uri: string,
  params: Loose,
  extra: RequestExtra,
): Promise<Loose> {
  let last: unknown;
  for (const upstream of candidates) {
    try {
      return await exchange(session, upstream, method, uri, params, extra);
    } catch (error) {
      last = error;
      if (extra.signal.aborted) break;
    }
  }
  if (last) throw last;
  return notFound(session, method, uri, params, `no upstream serves resource ${uri}`);
}

/** Sets every logging upstream to the most verbose level any session asked for. */
async function applyLogLevels(session: GatewaySession): Promise<void> {
  const { sessions, upstreams, logger } = session.context;
  let level: string | undefined;
  for (const open of sessions) {
    if (open.logLevel && (level === undefined || levelRank(open.logLevel) < levelRank(level)))
      level = open.logLevel;
  }
  if (!level) return;
  await Promise.all(
    upstreams.map((upstream) =>
      upstream
        .setLogLevel(level)
        .catch((error) => logger.debug({ upstream: upstream.name, error: String(error) }, 'setLevel failed')),
    ),
  );
}

/** Registers the pass-through handlers on a session's server. */
export function registerPassthrough(session: GatewaySession): void {
  const { server, context } = session;
  const offering = (key: 'resources' | 'prompts' | 'completions' | 'logging') =>
    context.upstreams.filter((upstream) => upstream.capabilities[key] !== undefined);

  const listed = async (
    kind: 'resources' | 'prompts',
    method: string,
    cursor: unknown,
    items: () => Loose[],
    field: string,
  ): Promise<Loose> => {
    const upstreams = offering(kind);
    if (cursor === undefined) await Promise.all(upstreams.map((upstream) => upstream.refresh(kind)));
    const { page, nextCursor } = paginate(items(), cursor, context.pageSize);
    const result = { [field]: page, ...(nextCursor ? { nextCursor } : {}) };
    await session.recordExchange({
      method,
      upstream: names(upstreams),
      params: { cursor: cursor ?? null },
      result,
    });
    return result;
  };

  server.setRequestHandler(
    ListResourcesRequestSchema,
    (request) =>
      listed(
        'resources',
        'resources/list',
        request.params?.cursor,
        () => offering('resources').flatMap((u) => u.resources),
        'resources',
      ) as never,
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    (request) =>
      listed(
        'resources',
        'resources/templates/list',
        request.params?.cursor,
        () => offering('resources').flatMap((u) => u.templates),
        'resourceTemplates',
      ) as never,
  );
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => {
    const uri = request.params.uri;
    return firstAnswer(
      session,
      upstreamsForResource(context.upstreams, uri),
      'resources/read',
      uri,
      request.params as Loose,
      extra,
    ) as never;
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const uri = request.params.uri;
    const upstream = upstreamsForResource(context.upstreams, uri).find(
      (candidate) => candidate.capabilities.resources?.subscribe,
    );
    if (!upstream)
      return notFound(
        session,
        'resources/subscribe',
        uri,
        request.params as Loose,
        `no upstream offers subscriptions to ${uri}`,
      );
    if (session.subscriptions.has(uri)) return {};
    const first = context.subscriptions.add(uri, session, upstream);
    if (!first) {
      await session.recordExchange({
        method: 'resources/subscribe',
        upstream: upstream.name,
        target: uri,
        params: request.params,
        result: {},
      });
      return {};
    }
    try {
      return (await exchange(
        session,
        upstream,
        'resources/subscribe',
        uri,
        request.params as Loose,
        extra,
      )) as never;
    } catch (error) {
      context.subscriptions.remove(uri, session);
      throw error;
    }
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
    const uri = request.params.uri;
    const upstream = context.subscriptions.remove(uri, session);
    if (!upstream) {
      await session.recordExchange({
        method: 'resources/unsubscribe',
        upstream: NO_UPSTREAM,
        target: uri,
        params: request.params,
        result: {},
      });
      return {};
    }
    return (await exchange(
      session,
      upstream,
      'resources/unsubscribe',
      uri,
      request.params as Loose,
      extra,
    )) as never;
  });

  server.setRequestHandler(
    ListPromptsRequestSchema,
    (request) =>
      listed(
        'prompts',
        'prompts/list',
        request.params?.cursor,
        () => [...promptCatalog(context.upstreams).values()].map((p) => p.advertised),
        'prompts',
      ) as never,
  );
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const prompt = promptCatalog(context.upstreams).get(request.params.name);
    if (!prompt)
      return notFound(
        session,
        'prompts/get',
        request.params.name,
        request.params as Loose,
        `no prompt named ${JSON.stringify(request.params.name)}`,
      );
    const params = { ...request.params, name: prompt.upstreamName };
    return (await exchange(session, prompt.upstream, 'prompts/get', prompt.name, params, extra)) as never;
  });

  server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
    const ref = request.params.ref as Loose;
    if (ref.type === 'ref/prompt') {
      const prompt = promptCatalog(context.upstreams).get(String(ref.name));
      if (!prompt)
        return notFound(
          session,
          'completion/complete',
          String(ref.name),
          request.params as Loose,
          `no prompt named ${JSON.stringify(ref.name)}`,
        );
      const params = { ...request.params, ref: { ...ref, name: prompt.upstreamName } };
      return (await exchange(
        session,
        prompt.upstream,
        'completion/complete',
        prompt.name,
        params,
        extra,
      )) as never;
    }
    const uri = String(ref.uri);
    const candidates = upstreamsForResource(context.upstreams, uri).filter(
      (upstream) => upstream.capabilities.completions,
    );
    return firstAnswer(
      session,
      candidates,
      'completion/complete',
      uri,
      request.params as Loose,
      extra,
    ) as never;
  });

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    session.logLevel = request.params.level;
    await applyLogLevels(session);
    await session.recordExchange({
      method: 'logging/setLevel',
      upstream: names(offering('logging')),
      target: request.params.level,
      params: request.params,
      result: {},
    });
    return {};
  });
}
