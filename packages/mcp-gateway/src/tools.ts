// `tools/list` and `tools/call` on a session's server.

import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { context as otelContext, propagation, type TextMapGetter, trace } from '@opentelemetry/api';
import { z } from 'zod';
import type { RequestExtra } from './context.js';
import { paginate } from './pagination.js';
import type { GatewaySession } from './session.js';
import { callTool } from './tool-call.js';

/**
 * `tools/call` as the gateway accepts it: only the tool name is required of the params, so a
 * malformed `arguments` (e.g. JSON text) reaches the gate and is refused as a tool result.
 */
const toolCallRequestSchema = z.object({
  method: z.literal('tools/call'),
  params: z.looseObject({
    name: z.string(),
    arguments: z.unknown().optional(),
    _meta: z.looseObject({}).optional(),
  }),
});

/** What a `tools/call` request carries, as the gateway reads it. */
export type ToolCallParams = z.infer<typeof toolCallRequestSchema>['params'];

const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (typeof carrier[key] === 'string' ? (carrier[key] as string) : undefined),
};

/**
 * The OpenTelemetry context a call runs in: the active one when it has a span (the HTTP request's,
 * already parented on the caller), else the W3C trace context the client put in `params._meta`
 * (`traceparent`, `tracestate`), as over stdio. Without an OpenTelemetry SDK this is a no-op.
 */
function traceContextOf(meta: Record<string, unknown> | undefined) {
  const active = otelContext.active();
  if (!meta || trace.getSpan(active)) return active;
  return propagation.extract(active, meta, metaGetter);
}

/**
 * Runs one `tools/call` of `session` through the gate (see `callTool`) in the OpenTelemetry
 * context of its request (see `traceContextOf`): what the SDK's protocol layer and the lane both call.
 */
export function runToolCall(session: GatewaySession, params: ToolCallParams, extra: RequestExtra) {
  return otelContext.with(traceContextOf(params._meta), () => callTool(session, params, extra));
}

/** Registers `tools/list` (the profile's tools, paginated) and `tools/call` (the gate). */
export function registerTools(session: GatewaySession): void {
  const { server, context } = session;
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const tools = context.catalog.forProfile(session.profile).map((tool) => tool.advertised);
    const { page, nextCursor } = paginate(tools, request.params?.cursor, context.pageSize);
    return { tools: page as never, ...(nextCursor ? { nextCursor } : {}) };
  });
  // The SDK's `Server` wraps a `tools/call` handler to validate requests and results against
  // its own schemas: the request check would answer malformed arguments with a protocol error,
  // and the result check would drop fields the upstream sent. The base class registers the
  // handler as given, so results pass through exactly as the upstream sent them.
  Protocol.prototype.setRequestHandler.call(
    server,
    toolCallRequestSchema as never,
    ((request: z.infer<typeof toolCallRequestSchema>, extra: RequestExtra) =>
      runToolCall(session, request.params, extra)) as never,
  );
}
