// `tools/call` through the gate (DESIGN §3): profile filter, scrub, an outstanding grant from a
// hook honoured as it is, else decide → (ask → approve → grant → consume) → forward → record.
// Every refusal is an `isError: true` result carrying `{"error": {"kind", "message", ...}}`.
import { type CallOutcomeReport, readArguments } from '@callgate/core';
import { digestOf } from '@callgate/core/crypto';
import type { ErrorBody, Outcome, StoredGrant } from '@callgate/protocol';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { awaitApproval, ProgressRelay } from './approval-wait.js';
import type { GatewayTool } from './catalog.js';
import type { RequestExtra } from './context.js';
import { forRecord } from './exact-json.js';
import { errorResult, jsonEncodedArguments } from './results.js';
import type { GatewaySession } from './session.js';
import type { ToolCallParams } from './tools.js';
import type { Loose } from './upstream.js';
import { isUpstreamAnswer, PassedThroughError } from './upstream-errors.js';

type ErrorDetail = ErrorBody['error'];

const refusalKind = {
  denied: 'approval-denied',
  expired: 'approval-expired',
  withdrawn: 'approval-expired',
} as const;

/** The header naming the run a hook opened (matched instead of the principal for grants). */
export const RUN_HEADER = 'x-callgate-run';

function runOfRequest(session: GatewaySession, extra: RequestExtra): string | undefined {
  const header = extra.requestInfo?.headers?.[RUN_HEADER];
  const value = Array.isArray(header) ? header[0] : header;
  return value || session.identity.runId || undefined;
}

/**
 * Consumes a grant a hook already obtained for exactly this call: same tool, same arguments
 * digest, unexpired and unused, in a run of the session's principal — the run the client named
 * (`X-Callgate-Run`) when it named one, else any. A run of another principal is never matched.
 */
function consumeOutstanding(
  session: GatewaySession,
  tool: string,
  digest: string,
  runId: string | undefined,
): Promise<StoredGrant | undefined> {
  return session.context.engine.consumeOutstandingGrant({
    tool,
    arguments_digest: digest,
    principal: session.principal,
    ...(runId ? { run_id: runId } : {}),
  });
}

/** The arguments without the policy's scrubbed parameters (never forwarded from a client). */
function scrubbed(session: GatewaySession, args: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...args };
  for (const name of session.context.engine.policy.scrub) delete copy[name];
  return copy;
}

/** Records a call's outcome; a failure to record is logged (the call already happened). */
async function record(session: GatewaySession, runId: string, report: CallOutcomeReport): Promise<void> {
  try {
    await session.context.engine.recordOutcome(runId, report);
  } catch (error) {
    session.context.logger.warn(
      { run: runId, call: report.call_id, error: String(error) },
      'could not record a call outcome',
    );
  }
}

/**
 * Forwards an admitted call to its upstream, with the client's cancellation and progress, and
 * returns the upstream's result unchanged. An upstream's JSON-RPC error is passed through; an
 * unreachable or silent upstream becomes a `tool-error` result.
 */
async function forward(
  session: GatewaySession,
  tool: GatewayTool,
  args: Record<string, unknown>,
  params: ToolCallParams,
  extra: RequestExtra,
  signal: AbortSignal,
  progress: ProgressRelay,
  call: { runId: string; callId: string; grantConsumed: boolean },
): Promise<Loose> {
  const { progressToken: _token, ...meta } = (params._meta ?? {}) as Loose;
  const untrack = session.context.inFlight.track(tool.upstream, { session, extra });
  const started = performance.now();
  const done = (outcome: Outcome, result: unknown, errorKind?: ErrorDetail['kind']) =>
    record(session, call.runId, {
      call_id: call.callId,
      outcome,
      result: forRecord(result),
      duration_ms: performance.now() - started,
      grant_consumed: call.grantConsumed,
      ...(errorKind ? { error_kind: errorKind } : {}),
    });
  try {
    const result = await tool.upstream.request(
      'tools/call',
      { name: tool.upstreamName, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) },
      { signal, ...(progress.wanted ? { onprogress: (value) => progress.forward(value) } : {}) },
    );
    const failed = result.isError === true;
    await done(failed ? 'error' : 'ok', result, failed ? 'tool-error' : undefined);
    return result;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (signal.aborted) {
      await done(
        'error',
        { error: { kind: 'tool-error', message: 'cancelled by the client' } },
        'tool-error',
      );
      throw error;
    }
    // The upstream's own JSON-RPC error (any code, -32000 included) is passed on as it came.
    const local = !isUpstreamAnswer(error);
    const detail: ErrorDetail = {
      kind: 'tool-error',
      message: local ? `${tool.upstream.name}: ${message}` : message,
    };
    await done(
      'error',
      { error: local ? detail : { ...detail, code: (error as McpError).code } },
      'tool-error',
    );
    if (!local) throw new PassedThroughError(error);
    return errorResult(detail, { structured: !tool.advertised.outputSchema });
  } finally {
    untrack();
  }
}

/**
 * Handles one `tools/call` of `session` (MCP 2025-11-25) through the gate and returns the
 * `CallToolResult` to send: the upstream's result unchanged, or a refusal as an `isError`
 * result. Throws only what the upstream itself answered with a JSON-RPC error.
 */
export async function callTool(
  session: GatewaySession,
  params: ToolCallParams,
  extra: RequestExtra,
): Promise<Loose> {
  const { context } = session;
  const { engine, catalog } = context;
  const name = params.name;
  const tool = catalog.get(name);
  const signal = session.requestSignal(extra.requestId, extra.signal);
  session.busy++;
  // Every exit below awaits the call it forwards: `finally` runs once the call has ended, not
  // when forwarding began (the session stays busy, its request id in use).
  try {
    if (!tool || !engine.policy.inProfile(session.profile, name)) {
      const error: ErrorDetail = { kind: 'tool-not-found', message: `no tool named ${JSON.stringify(name)}` };
      await session.recordExchange({
        method: 'tools/call',
        upstream: tool?.upstream.name ?? 'callgate',
        target: name,
        params: { name, arguments: params.arguments ?? null },
        result: { error },
        error_kind: 'tool-not-found',
      });
      // A tool that exists but lies outside the session's profile: a refused attempt, kept as evidence.
      if (tool) {
        const runId = await session.runId().catch(() => undefined);
        if (runId)
          await engine.recordRefusedAttempt(runId, {
            kind: 'tool-out-of-profile',
            actor: session.principal,
            tool: name,
            reason: `${name} is not in profile ${session.profile}`,
          });
      }
      return errorResult(error);
    }
    const structured = !tool.advertised.outputSchema;
    let runId: string;
    try {
      runId = await session.runId();
    } catch (error) {
      return errorResult({
        kind: 'gate-unavailable',
        message: `the gate could not start this session's run: ${String(error)}`,
      });
    }
    const given = params.arguments ?? {};
    if (typeof given !== 'object' || given === null || Array.isArray(given)) {
      const error: ErrorDetail = {
        kind: 'tool-args-invalid',
        message:
          typeof given === 'string'
            ? 'arguments arrived as a JSON-encoded string, but MCP tool arguments are an object: send the object itself, not its JSON text'
            : `arguments must be an object, not ${Array.isArray(given) ? 'an array' : typeof given}`,
        path: 'arguments',
      };
      await session.recordExchange({
        method: 'tools/call',
        upstream: tool.upstream.name,
        target: name,
        params,
        error_kind: error.kind,
      });
      return errorResult(error, { structured });
    }
    const args = scrubbed(session, given as Record<string, unknown>);
    const progress = new ProgressRelay(extra);

    // A call a hook already decided (and a person perhaps approved) runs on its grant.
    let digest: string | undefined;
    try {
      digest = digestOf(readArguments(args));
    } catch {
      digest = undefined;
    }
    if (digest) {
      const grant = await consumeOutstanding(session, name, digest, runOfRequest(session, extra));
      if (grant) {
        // The decision and its outcome live in the hook's run; this session's run notes the link.
        await session.recordExchange({
          method: 'tools/call',
          upstream: tool.upstream.name,
          target: name,
          params: { name, arguments: args, grant: { run_id: grant.run_id, call_id: grant.call_id } },
        });
        return await forward(session, tool, args, params, extra, signal, progress, {
          runId: grant.run_id,
          callId: grant.call_id,
          grantConsumed: true,
        });
      }
    }

    let verdict: Awaited<ReturnType<typeof engine.decide>>[number] | undefined;
    try {
      [verdict] = await engine.decide(runId, [{ id: null, tool: name, arguments: args }]);
    } catch (error) {
      return errorResult(
        { kind: 'gate-unavailable', message: `the gate could not decide this call: ${String(error)}` },
        { structured },
      );
    }
    if (!verdict)
      return errorResult({ kind: 'internal', message: 'the gate returned no verdict' }, { structured });
    const callId = verdict.call_id;
    const refuse = async (error: ErrorDetail): Promise<Loose> => {
      await record(session, runId, {
        call_id: callId,
        outcome: 'denied',
        result: { error },
        error_kind: error.kind,
      });
      return errorResult(error, { structured });
    };

    if (verdict.status === 'refused') {
      const error = verdict.error ?? { kind: 'internal', message: 'refused' };
      if (error.kind === 'tool-args-invalid') {
        const encoded = jsonEncodedArguments(tool.advertised.inputSchema as Loose, args);
        if (encoded.length > 0)
          return refuse({ ...error, message: `${encoded.join('; ')} (${error.message})` });
      }
      return refuse(error);
    }
    if (verdict.status === 'allowed') {
      return await forward(session, tool, verdict.arguments ?? args, params, extra, signal, progress, {
        runId,
        callId,
        grantConsumed: false,
      });
    }

    const approval = verdict.approval;
    if (!approval)
      return refuse({ kind: 'internal', message: 'the call needs an approval but none was created' });
    const state = await awaitApproval(session, approval, extra, signal, progress);
    const final = state.approval;
    if (final.status !== 'approved' || !state.grant) {
      const why = final.response_reason ? `: ${final.response_reason}` : '';
      const kind =
        final.status === 'pending'
          ? 'approval-pending'
          : refusalKind[final.status as keyof typeof refusalKind];
      return refuse({
        kind: kind ?? 'approval-denied',
        message: `approval ${final.id} was ${final.status}${why}`,
        approval_id: final.id,
      });
    }
    try {
      await engine.consumeGrant(state.grant.token, {
        run_id: runId,
        call_id: callId,
        tool: name,
        arguments_digest: state.grant.arguments_digest,
      });
    } catch (error) {
      const body = (error as { toBody?: () => ErrorBody }).toBody?.();
      return refuse(body?.error ?? { kind: 'grant-invalid', message: String(error) });
    }
    return await forward(
      session,
      tool,
      state.arguments ?? verdict.arguments ?? args,
      params,
      extra,
      signal,
      progress,
      {
        runId,
        callId,
        grantConsumed: true,
      },
    );
  } finally {
    session.busy--;
    session.lastActive = Date.now();
    session.forgetRequest(extra.requestId);
  }
}
