import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@callgate/core';
import type { ApprovalAnswerer, Governor } from '@callgate/core/adapter';
import {
  type GovernedCall,
  GovernedCalls,
  mintCallId,
  type Refusal,
  refusalOf,
  refusalText,
  runArguments,
} from '@callgate/core/adapter';
import { CallgateError, type ToolCall } from '@callgate/protocol';
import { type AgentMiddleware, AIMessage, createMiddleware, ToolMessage } from 'langchain';
import { z } from 'zod';
import { askByInterrupt } from './interrupt-approvals.js';
import { type ToolSpecExtras, toolSpecOf } from './tool-specs.js';

/** Options of {@link callgateMiddleware}. */
export interface CallgateMiddlewareOptions {
  /** callgate in this process (`localGovernor(engine)`) or behind a server (`remoteGovernor(client)`). */
  governor: Governor;
  /** Who each run acts for (a string, or read from the agent's runtime context). Default: `langchain` in-process; against a server, the API key's name. */
  principal?: string | ((context: unknown) => string);
  labels?: Record<string, string>;
  /** Longest wait for a person's answer, in ms. Default 5 minutes. */
  approvalWaitMs?: number;
  /** What callgate should know of each tool beyond its schema: annotations, trust, idempotency key. */
  toolSpecs?: Record<string, ToolSpecExtras>;
  logger?: Logger;
  /**
   * How an ask reaches a person.
   * - `wait` (default): the tool call waits in place for callgate's answer (inbox, CLI,
   *   webhook), up to `approvalWaitMs`.
   * - `interrupt`: the graph pauses with LangGraph's `interrupt()`, its payload a `HITLRequest`
   *   as `humanInTheLoopMiddleware` makes (each action names its callgate approval); resume with
   *   `new Command({ resume: { decisions: [...] } })` on the same thread (a checkpointer is
   *   required). Each decision is answered in callgate by `reviewer`.
   */
  approvals?: 'wait' | 'interrupt';
  /** Who answers approvals in `interrupt` mode: a reviewer key's `CallgateClient`, or `localReviewer(engine, name)`. */
  reviewer?: ApprovalAnswerer;
}

/** The callgate run of the governed tool call being executed: an agent used as a tool joins it. */
const activeRun = new AsyncLocalStorage<{ runId: string; governor: Governor }>();

const stateSchema = z.object({
  /** The callgate run of this agent invocation. */
  callgateRunId: z.string().optional(),
  /** False when the run belongs to an outer agent this one serves as a tool. */
  callgateRunOwned: z.boolean().optional(),
});

type LangChainToolCall = { id?: string; name: string; args: unknown; type?: 'tool_call' };
type InvalidToolCall = { id?: string; name?: string; args?: string; error?: string };

/**
 * The model's message with only its tool calls replaced: every other field it was built with
 * (content, ids, metadata, usage, provider fields) as it is now. Calls LangChain could not parse
 * are among the new tool calls, so `invalid_tool_calls` empties when there were any.
 */
function withToolCalls(message: AIMessage, toolCalls: LangChainToolCall[], invalidMoved: boolean): AIMessage {
  const given = (message.lc_kwargs ?? {}) as Record<string, unknown>;
  const fields = Object.fromEntries(
    Object.keys(given).map((key) => [
      key,
      key in message ? (message as unknown as Record<string, unknown>)[key] : given[key],
    ]),
  );
  return new AIMessage({
    ...fields,
    content: message.content,
    tool_calls: toolCalls as AIMessage['tool_calls'],
    ...(invalidMoved ? { invalid_tool_calls: [] } : {}),
  } as ConstructorParameters<typeof AIMessage>[0] & object);
}

/** Arguments as an object: JSON text is parsed; anything unreadable is `{}` (the call is refused anyway). */
function objectArguments(args: unknown): Record<string, unknown> {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * A `createAgent` middleware that puts every tool call behind callgate. Each agent invocation is
 * a callgate run (an agent invoked from inside a governed tool joins the outer run). After each
 * model call the step's calls are decided together, before any runs, with the model message
 * recorded; calls without an id get callgate's minted id, and calls LangChain could not parse
 * become tool calls callgate refuses, so every call in the history gets exactly one result.
 * Each tool call then waits for its approval if it needs one, runs only with its grant
 * consumed, and has its outcome recorded. A refused call returns an error `ToolMessage` whose
 * content is `{"error": {"kind", "message", ...}}`; the run goes on.
 */
export function callgateMiddleware(options: CallgateMiddlewareOptions): AgentMiddleware {
  const { governor } = options;
  const { reviewer } = options;
  if (options.approvals === 'interrupt' && !reviewer) {
    throw new CallgateError(
      'request-invalid',
      "options.reviewer: approvals 'interrupt' answers approvals in callgate, so it needs a reviewer (a reviewer key's CallgateClient, or localReviewer(engine, name))",
    );
  }
  const sessions = new Map<string, GovernedCalls>();
  const session = (runId: string): GovernedCalls => {
    let calls = sessions.get(runId);
    if (!calls) {
      calls = new GovernedCalls({
        governor,
        runId,
        ...(options.approvalWaitMs !== undefined ? { approvalWaitMs: options.approvalWaitMs } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
      sessions.set(runId, calls);
    }
    return calls;
  };
  const specOf = (tool: { name: string; description?: unknown; schema?: unknown }) =>
    toolSpecOf(tool, options.toolSpecs?.[tool.name]);

  const errorMessage = (refusal: Refusal, toolCall: LangChainToolCall, call?: GovernedCall) =>
    new ToolMessage({
      content: refusalText(refusal),
      tool_call_id: call?.callId || toolCall.id || '',
      name: toolCall.name,
      status: 'error',
    });

  return createMiddleware({
    name: 'callgate',
    stateSchema,

    beforeAgent: async (_state, runtime) => {
      const outer = activeRun.getStore();
      if (outer && outer.governor === governor)
        return { callgateRunId: outer.runId, callgateRunOwned: false };
      const principal =
        typeof options.principal === 'function' ? options.principal(runtime.context) : options.principal;
      const { run_id } = await governor.startRun({
        principal: principal,
        framework: 'langchain',
        ...(options.labels ? { labels: options.labels } : {}),
      });
      return { callgateRunId: run_id, callgateRunOwned: true };
    },

    wrapModelCall: async (request, handler) => {
      const response = await handler(request);
      const runId = request.state.callgateRunId;
      if (!runId || !AIMessage.isInstance(response)) return response;
      const toolCalls = (response.tool_calls ?? []) as LangChainToolCall[];
      const invalid = (response.invalid_tool_calls ?? []) as InvalidToolCall[];
      if (toolCalls.length === 0 && invalid.length === 0) {
        await governor.recordMessage(runId, { role: 'assistant', content: response.content });
        return response;
      }
      // A call whose id another call of the step already has cannot keep it (each result is
      // matched to its call by id): it is decided as a call without an id, and gets a minted one.
      // Nor can a call whose id an earlier step's result already answers while another call of
      // the step is new: LangChain's agent then runs only the calls no result answers yet, so
      // this one would never run and the model would read no result for it. (When every call of
      // the step reuses an id, LangChain runs them all: each is its id's next attempt.)
      const answered = new Set(
        request.state.messages
          .filter((message) => ToolMessage.isInstance(message))
          .map((message) => (message as ToolMessage).tool_call_id),
      );
      const inStep = new Set<string>();
      const someNew = [...toolCalls, ...invalid].some((call) => {
        const isNew = !call.id || !answered.has(call.id) || inStep.has(call.id);
        if (call.id) inStep.add(call.id);
        return isNew;
      });
      const seen = new Set<string>(someNew ? answered : []);
      const ownId = (id: string | undefined) => {
        if (!id || seen.has(id)) return null;
        seen.add(id);
        return id;
      };
      const asked: ToolCall[] = [
        ...toolCalls.map((call) => ({ id: ownId(call.id), tool: call.name, arguments: call.args })),
        ...invalid.map((call) => ({
          id: ownId(call.id),
          tool: call.name ?? '',
          arguments: call.args ?? '',
        })),
      ];
      const specs = request.tools
        .filter(
          (tool): tool is typeof tool & { name: string } =>
            typeof (tool as { name?: unknown }).name === 'string',
        )
        .map((tool) => specOf(tool as { name: string; description?: unknown; schema?: unknown }));
      const calls = await session(runId).decide(asked, {
        message: { role: 'assistant', content: response.content },
        keys: asked.map((call) => call.id ?? ''),
        specs,
      });
      // The history the next model call reads: every call with an id and object arguments.
      const rewritten = asked.map((call, index) => {
        const governed = calls[index] as GovernedCall;
        const id = governed.callId || call.id || mintCallId();
        if (governed.key !== id) session(runId).rekey(governed, id);
        return { id, name: call.tool, args: objectArguments(call.arguments), type: 'tool_call' as const };
      });
      return withToolCalls(response, rewritten, invalid.length > 0);
    },

    afterModel: async (state) => {
      const runId = state.callgateRunId;
      if (options.approvals !== 'interrupt' || !runId || !reviewer) return;
      const last = [...state.messages].reverse().find((message) => AIMessage.isInstance(message));
      const toolCalls = (last as AIMessage | undefined)?.tool_calls ?? [];
      await askByInterrupt(session(runId), toolCalls as LangChainToolCall[], reviewer);
    },

    wrapToolCall: async (request, handler) => {
      const toolCall = request.toolCall as LangChainToolCall;
      const runId = request.state.callgateRunId;
      if (!runId) {
        return errorMessage(
          refusalOf(
            new Error(
              'the agent invocation has no callgate run (is the middleware installed on createAgent?)',
            ),
          ),
          toolCall,
        );
      }
      const calls = session(runId);
      const key = toolCall.id ?? '';
      const signal = request.runtime.signal;
      const call =
        calls.take(key, objectArguments(toolCall.args)) ??
        ((
          await calls.decide([{ id: key || null, tool: toolCall.name, arguments: toolCall.args }], {
            keys: [key],
            ...(request.tool && 'name' in request.tool
              ? { specs: [specOf(request.tool as { name: string })] }
              : {}),
          })
        )[0] as GovernedCall);
      let refusal = await calls.settle(call, calls.approvalWaitMs, signal);
      const args = refusal ? undefined : runArguments(call, objectArguments(toolCall.args));
      if (!refusal && args === undefined) {
        refusal = {
          kind: 'grant-invalid',
          message: `the arguments of call ${call.callId} changed after callgate decided it`,
          call_id: call.callId,
        };
      }
      if (refusal) {
        await calls.refuse(call, refusal);
        return errorMessage(refusal, toolCall, call);
      }
      const started = await calls.start(call, signal);
      if ('error' in started) return errorMessage(started.error, toolCall, call);
      let result: Awaited<ReturnType<typeof handler>>;
      try {
        result = await activeRun.run({ runId, governor }, () =>
          handler({ ...request, toolCall: { ...request.toolCall, args: args ?? {} } }),
        );
      } catch (error) {
        await calls.complete(started, { ok: false, error });
        throw error;
      }
      if (ToolMessage.isInstance(result) && result.status === 'error') {
        await calls.complete(started, { ok: false, error: new Error(String(result.content)) });
      } else {
        await calls.complete(started, {
          ok: true,
          result: ToolMessage.isInstance(result) ? result.content : { command: true },
        });
      }
      return result;
    },

    afterAgent: async (state) => {
      const runId = state.callgateRunId;
      if (!runId || state.callgateRunOwned === false) return;
      sessions.delete(runId);
      await governor.endRun(runId, 'completed');
    },
  }) as AgentMiddleware;
}
