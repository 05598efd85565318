// OpenTelemetry spans made from the ledger: each decision, tool call and approval wait becomes a
// span (GenAI semantic conventions) carrying the digest of its ledger record, so a trace points
// at the record that proves it. The caller's W3C trace context (`traceparent` on the HTTP API, in
// `params._meta` of an MCP request) is the parent. Only `@opentelemetry/api` is used here.
import type { Ledger, Store } from '@callgate/core';
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Hono, Context as HonoContext, Next } from 'hono';
import { routePath } from 'hono/route';

/** Open spans kept at most (calls whose end never comes are ended as incomplete). */
const OPEN_SPANS = 10_000;

/** Options of {@link traceLedger}. */
export interface TracingOptions {
  tracer: Tracer;
  /**
   * Put arguments (`gen_ai.tool.call.arguments`) and results (`gen_ai.tool.call.result`) into
   * spans, read from the vault. Default false: spans carry digests and commitments only.
   */
  captureContent?: boolean;
  /** Where openings are read when `captureContent` (the engine's store). */
  store?: Pick<Store, 'getOpenings'>;
}

interface OpenCall {
  span: Span;
  context: Context;
}

const now = () => performance.timeOrigin + performance.now();

/** A map that ends the oldest span when it holds too many. */
class OpenSpans<Value extends { span: Span } | Span> extends Map<string, Value> {
  override set(key: string, value: Value): this {
    if (this.size >= OPEN_SPANS) {
      const [oldestKey, oldest] = this.entries().next().value as [string, Value];
      const span: Span = 'span' in oldest ? (oldest as { span: Span }).span : (oldest as Span);
      span.setAttribute('callgate.span.incomplete', true);
      span.end();
      this.delete(oldestKey);
    }
    return super.set(key, value);
  }
}

/**
 * Observes `ledger` and makes spans of its records:
 * - `execute_tool {tool}` (INTERNAL; `gen_ai.operation.name=execute_tool`, `gen_ai.tool.name`,
 *   `gen_ai.tool.call.id`), from the decision to the call's `call-end`, with
 *   `callgate.decision.digest` and `callgate.call_end.digest`, `callgate.outcome` and
 *   `error.type` when the call did not end `ok`;
 * - under it, `apply_guardrail callgate tool_call` for the decision (`gen_ai.operation.name=
 *   apply_guardrail`, `gen_ai.security.decision.type` allow/deny, `callgate.decision.effect`
 *   allow/deny/ask, `callgate.decision.rules`, `callgate.policy.digest`, `callgate.record.digest`);
 * - under it too, `await_approval {tool}` from an approval's request to its answer
 *   (`callgate.approval.status`, `callgate.approval.reviewer`, both records' digests).
 * The parent of a call's span is the trace context active when its decision was appended.
 *
 * @returns the function that stops observing (open spans are ended as incomplete).
 */
export function traceLedger(ledger: Pick<Ledger, 'observeAppends'>, options: TracingOptions): () => void {
  const { tracer } = options;
  const calls = new OpenSpans<OpenCall>();
  const latestAttempt = new Map<string, string>();
  const approvals = new OpenSpans<Span>();
  const content = options.captureContent === true ? options.store : undefined;

  const attach = async (span: Span, attribute: string, commitment: string | null) => {
    if (!content || commitment === null) return;
    try {
      const [opening] = await content.getOpenings([commitment]);
      if (opening) span.setAttribute(attribute, JSON.stringify(opening.value));
    } catch {}
  };

  const stop = ledger.observeAppends((runId, body) => {
    const started = now();
    const active = context.active();
    switch (body.type) {
      case 'call-decision': {
        const call = `${runId}\n${body.call_id}`;
        const key = `${call}\n${body.attempt}`;
        const toolSpan = tracer.startSpan(
          `execute_tool ${body.tool}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: started,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': body.tool,
              'gen_ai.tool.call.id': body.call_id,
              'callgate.run.id': runId,
              'callgate.call.attempt': body.attempt,
            },
          },
          active,
        );
        const toolContext = trace.setSpan(active, toolSpan);
        calls.set(key, { span: toolSpan, context: toolContext });
        latestAttempt.set(call, key);
        const decision = tracer.startSpan(
          'apply_guardrail callgate tool_call',
          {
            kind: SpanKind.INTERNAL,
            startTime: started,
            attributes: {
              'gen_ai.operation.name': 'apply_guardrail',
              'gen_ai.guardian.name': 'callgate',
              'gen_ai.security.target.type': 'tool_call',
              'gen_ai.tool.name': body.tool,
              'gen_ai.tool.call.id': body.call_id,
              'callgate.decision.effect': body.effect,
              'callgate.decision.rules': body.rules,
              'callgate.policy.digest': body.policy_digest,
              ...(body.effect === 'ask' ? {} : { 'gen_ai.security.decision.type': body.effect }),
              ...(body.effect === 'allow' ? {} : { 'gen_ai.security.decision.reason': body.reason }),
              ...(body.error_kind ? { 'error.type': body.error_kind } : {}),
            },
          },
          toolContext,
        );
        return (outcome) => {
          if ('error' in outcome) {
            decision.setStatus({ code: SpanStatusCode.ERROR, message: 'the decision was not recorded' });
            decision.end();
            toolSpan.setStatus({ code: SpanStatusCode.ERROR, message: 'the decision was not recorded' });
            toolSpan.end();
            calls.delete(key);
            return;
          }
          decision.setAttributes({
            'callgate.record.digest': outcome.digest,
            'callgate.record.seq': outcome.record.seq,
          });
          toolSpan.setAttribute('callgate.decision.digest', outcome.digest);
          void attach(toolSpan, 'gen_ai.tool.call.arguments', body.arguments_commitment).finally(() =>
            decision.end(),
          );
        };
      }
      case 'approval-request': {
        const parent = calls.get(latestAttempt.get(`${runId}\n${body.call_id}`) ?? '')?.context ?? active;
        const span = tracer.startSpan(
          `await_approval ${body.tool}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: started,
            attributes: {
              'gen_ai.tool.name': body.tool,
              'gen_ai.tool.call.id': body.call_id,
              'callgate.approval.id': body.approval_id,
              'callgate.decision.rules': body.rules,
            },
          },
          parent,
        );
        approvals.set(body.approval_id, span);
        return (outcome) => {
          if ('record' in outcome) span.setAttribute('callgate.approval_request.digest', outcome.digest);
        };
      }
      case 'approval-response':
        return (outcome) => {
          const span = approvals.get(body.approval_id);
          if (!span || !('record' in outcome)) return;
          approvals.delete(body.approval_id);
          span.setAttributes({
            'callgate.approval.status': body.status,
            'callgate.approval.edited': body.edited,
            'callgate.approval_response.digest': outcome.digest,
            ...(body.reviewer !== null ? { 'callgate.approval.reviewer': body.reviewer } : {}),
          });
          span.end();
        };
      case 'call-end':
        return (outcome) => {
          const key = `${runId}\n${body.call_id}\n${body.attempt}`;
          const open = calls.get(key);
          if (!open || !('record' in outcome)) return;
          calls.delete(key);
          if (latestAttempt.get(`${runId}\n${body.call_id}`) === key)
            latestAttempt.delete(`${runId}\n${body.call_id}`);
          const { span } = open;
          span.setAttributes({
            'callgate.outcome': body.outcome,
            'callgate.call_end.digest': outcome.digest,
            'callgate.grant_consumed': body.grant_consumed,
          });
          if (body.outcome !== 'ok') span.setAttribute('error.type', body.error_kind ?? body.outcome);
          if (body.outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
          const ended = now();
          void attach(span, 'gen_ai.tool.call.result', body.result_commitment).finally(() => span.end(ended));
        };
      default:
        return undefined;
    }
  });
  return () => {
    stop();
    for (const open of [...calls.values()].map((value) => value.span).concat([...approvals.values()])) {
      open.setAttribute('callgate.span.incomplete', true);
      open.end();
    }
    calls.clear();
    approvals.clear();
  };
}

const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (typeof carrier[key] === 'string' ? (carrier[key] as string) : undefined),
};

/** Largest MCP body, in bytes, read for its `params._meta` trace context. */
const TRACE_META_BODY_LIMIT = 1024 * 1024;

/**
 * The trace context of a request: its `traceparent`/`tracestate` headers, or, for a single MCP
 * JSON-RPC message without them, the message's `params._meta` (as the MCP semantic conventions
 * carry it). Reads a clone of the body, so the handler still reads the original.
 */
async function parentOf(request: Request): Promise<Context> {
  if (request.headers.has('traceparent'))
    return propagation.extract(ROOT_CONTEXT, request.headers, headerGetter);
  const path = new URL(request.url).pathname;
  if (request.method !== 'POST' || !/^\/mcp(\/|$)/.test(path)) return ROOT_CONTEXT;
  // Read before the key is checked and before the gateway's body limit: only a body of a
  // declared, small length (an unbounded one is left to the gateway to refuse).
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (!(declared <= TRACE_META_BODY_LIMIT)) return ROOT_CONTEXT;
  try {
    const message = JSON.parse(await request.clone().text()) as { params?: { _meta?: unknown } };
    const meta = message?.params?._meta;
    if (meta && typeof meta === 'object' && !Array.isArray(meta))
      return propagation.extract(ROOT_CONTEXT, meta as Record<string, unknown>, metaGetter);
  } catch {}
  return ROOT_CONTEXT;
}

/**
 * Hono middleware: a SERVER span per request (`{method} {route}`, `http.request.method`,
 * `http.route`, `http.response.status_code`), child of the caller's trace context, active while
 * the request is handled (so the records it appends become its children). `/metrics` is not traced.
 */
export function tracingMiddleware(tracer: Tracer) {
  return async (c: HonoContext, next: Next): Promise<void> => {
    if (c.req.path === '/metrics') return next();
    const parent = await parentOf(c.req.raw);
    const span = tracer.startSpan(
      c.req.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), () => next());
    } finally {
      const route = routePath(c, -1);
      if (route && route !== '*' && route !== '/*') {
        span.updateName(`${c.req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', c.res.status);
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/**
 * Traces an app: the request middleware (call before any other `app.use`) and the ledger's
 * records. Returns the function that stops observing the ledger.
 */
export function mountTracing(
  app: Hono,
  engine: { ledger: Pick<Ledger, 'observeAppends'>; store: Pick<Store, 'getOpenings'> },
  options: { tracer: Tracer; captureContent?: boolean },
): () => void {
  app.use('*', tracingMiddleware(options.tracer));
  return traceLedger(engine.ledger, { ...options, store: engine.store });
}
