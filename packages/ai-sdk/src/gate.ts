import type { Governor, Logger } from '@callgate/core';
import {
  type GovernedCall,
  GovernedCalls,
  type Refusal,
  refusalText,
  runArguments,
  type StartedCall,
} from '@callgate/core';
import type {
  GenericToolApprovalFunction,
  ModelMessage,
  Tool,
  ToolApprovalResponse,
  ToolApprovalStatus,
  ToolCallRepairFunction,
  ToolExecutionOptions,
  ToolSet,
} from 'ai';
import {
  type ApprovalRequestPart,
  approvalIdIn,
  approvedRequestFor,
  isApprovalRequest,
  requestReason,
  requestToolCallId,
} from './approval-parts.js';
import { type ToolSpecExtras, toolSpecOf } from './tool-specs.js';

/**
 * How an `ask` reaches a person.
 * - `request` (default): the step ends with the SDK's own `tool-approval-request`; the reviewer
 *   answers in callgate (inbox, CLI, webhook, an approval port) and
 *   {@link AiSdkGate.approvalResponses} turns callgate's answers into the SDK's
 *   `tool-approval-response` parts for the next call.
 * - `wait`: the approval function waits for callgate's answer itself (up to the wait limit) and
 *   returns `approved` or `denied`: for subagents and server-side loops, where the SDK's approval
 *   parts cannot travel.
 */
export type ApprovalMode = 'request' | 'wait';

/** Options of {@link createAiSdkGate}. */
export interface AiSdkGateOptions {
  /** callgate in this process (`localGovernor(engine)`) or behind a server (`remoteGovernor(client)`). */
  governor: Governor;
  /** Continue this callgate run (e.g. the next request of the same chat). Default: start a new run. */
  runId?: string;
  /** Who the new run acts for. Default: `ai-sdk` in-process; against a server, the API key's name. */
  principal?: string;
  labels?: Record<string, string>;
  parentRunId?: string;
  /** Default `request`. */
  approvals?: ApprovalMode;
  /** Longest wait for a person's answer, in ms. Default 5 minutes. */
  approvalWaitMs?: number;
  /** What callgate should know of each tool beyond its schema: annotations, trust, idempotency key. */
  toolSpecs?: Record<string, ToolSpecExtras>;
  logger?: Logger;
}

/** What {@link AiSdkGate.settings} returns: spread it into `generateText`, `streamText` or `ToolLoopAgent`. */
export interface AiSdkGateSettings<TOOLS extends ToolSet> {
  tools: TOOLS;
  toolApproval: GenericToolApprovalFunction<TOOLS, never, unknown>;
  repairToolCall: ToolCallRepairFunction<TOOLS>;
}

type ApprovalInput = Parameters<GenericToolApprovalFunction<ToolSet, never, unknown>>[0];
type ExecuteFunction = (input: unknown, options: ToolExecutionOptions<never>) => unknown;

/**
 * Starts (or continues) a callgate run and returns the gate for the AI SDK calls of that run.
 *
 * ```ts
 * const gate = await createAiSdkGate({ governor: localGovernor(engine), principal: 'alice' });
 * const result = await generateText({ model, prompt, ...gate.settings(tools) });
 * ```
 */
export async function createAiSdkGate(options: AiSdkGateOptions): Promise<AiSdkGate> {
  const runId =
    options.runId ??
    (
      await options.governor.startRun({
        principal: options.principal,
        framework: 'ai-sdk',
        ...(options.labels ? { labels: options.labels } : {}),
        ...(options.parentRunId ? { parent_run_id: options.parentRunId } : {}),
      })
    ).run_id;
  return new AiSdkGate(options, runId);
}

/**
 * The gate between one callgate run and the AI SDK: decides every tool call through the SDK's
 * approval function (`toolApproval`), runs only calls callgate cleared (consuming their grant),
 * and records every outcome. It translates; it never decides.
 */
export class AiSdkGate {
  readonly runId: string;
  readonly #calls: GovernedCalls;
  readonly #mode: ApprovalMode;
  readonly #extras: Record<string, ToolSpecExtras>;
  readonly #specs = new Map<string, ReturnType<typeof toolSpecOf>>();

  constructor(options: AiSdkGateOptions, runId: string) {
    this.runId = runId;
    this.#mode = options.approvals ?? 'request';
    this.#extras = options.toolSpecs ?? {};
    this.#calls = new GovernedCalls({
      governor: options.governor,
      runId,
      ...(options.approvalWaitMs !== undefined ? { approvalWaitMs: options.approvalWaitMs } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  /**
   * The AI SDK settings that put `tools` behind callgate: the wrapped tools, the approval
   * function and a repair function that records calls the SDK could not parse (then lets the
   * SDK report them, or tries `options.repairToolCall` first).
   */
  settings<TOOLS extends ToolSet>(
    tools: TOOLS,
    options: { approvals?: ApprovalMode; repairToolCall?: ToolCallRepairFunction<TOOLS> } = {},
  ): AiSdkGateSettings<TOOLS> {
    const mode = options.approvals ?? this.#mode;
    return {
      tools: this.tools(tools),
      toolApproval: ((input: ApprovalInput) =>
        this.#approve(input, mode)) as AiSdkGateSettings<TOOLS>['toolApproval'],
      repairToolCall: this.#repair(options.repairToolCall as ToolCallRepairFunction<ToolSet> | undefined),
    };
  }

  /** The approval function (`toolApproval`) in the gate's default approval mode. */
  readonly toolApproval: GenericToolApprovalFunction<ToolSet, never, unknown> = (input) =>
    this.#approve(input as ApprovalInput, this.#mode);

  /** A `repairToolCall` that records calls the SDK could not parse, then lets the SDK report them. */
  get repairToolCall(): ToolCallRepairFunction<ToolSet> {
    return this.#repair(undefined);
  }

  /**
   * `tools` with each `execute` wrapped: a call runs only once callgate cleared it (deciding it
   * here if no approval function did), with the decided arguments, after its grant is consumed;
   * its outcome is recorded. A refused call returns `{"error": {...}}` instead of running.
   */
  tools<TOOLS extends ToolSet>(tools: TOOLS): TOOLS {
    const wrapped: Record<string, Tool> = {};
    for (const [name, tool] of Object.entries(tools)) {
      const execute = (tool as { execute?: ExecuteFunction }).execute;
      if (typeof execute !== 'function') {
        wrapped[name] = tool;
        continue;
      }
      // The SDK streams a tool's outputs when `execute` returns an async iterable itself (not a
      // promise of one), so a streaming tool gets a streaming wrapper.
      const streaming = Object.prototype.toString.call(execute) === '[object AsyncGeneratorFunction]';
      const governed = streaming
        ? (input: unknown, options: ToolExecutionOptions<never>) =>
            this.#executeStream(name, tool, execute, input, options)
        : (input: unknown, options: ToolExecutionOptions<never>) =>
            this.#execute(name, tool, execute, input, options);
      wrapped[name] = { ...tool, execute: governed } as Tool;
    }
    return wrapped as TOOLS;
  }

  /**
   * The SDK's `tool-approval-response` parts for the manual approval requests in `from` (a
   * result, its `content`, or response messages): waits for callgate's answers (up to
   * `waitMs`, default the gate's wait limit; an approval still pending then is withdrawn).
   * Push them as a `tool` message and call the SDK again; approved calls then run.
   */
  async approvalResponses(
    from: { content: readonly unknown[] } | readonly unknown[],
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<ToolApprovalResponse[]> {
    const items = Array.isArray(from) ? from : (from as { content: readonly unknown[] }).content;
    const parts: ApprovalRequestPart[] = [];
    for (const item of items) {
      const message = item as Partial<ModelMessage>;
      const nested =
        message.role === 'assistant' && Array.isArray(message.content) ? message.content : [item];
      for (const part of nested) if (isApprovalRequest(part) && !part.isAutomatic) parts.push(part);
    }
    return Promise.all(
      parts.map(async (part): Promise<ToolApprovalResponse> => {
        const call = this.#pendingCall(requestToolCallId(part), part.toolCall?.toolName, part);
        const refusal = call
          ? await this.#calls.settle(call, options.waitMs ?? this.#calls.approvalWaitMs, options.signal)
          : noApproval(requestToolCallId(part));
        if (refusal) {
          if (call) await this.#calls.refuse(call, refusal);
          return {
            type: 'tool-approval-response',
            approvalId: part.approvalId,
            approved: false,
            reason: refusalText(refusal),
          };
        }
        return {
          type: 'tool-approval-response',
          approvalId: part.approvalId,
          approved: true,
          reason: `approved in callgate (${call?.approvalId})`,
        };
      }),
    );
  }

  /** Records a model message (its content is committed in the ledger, never stored there). */
  recordMessage(message: { role: string; content?: unknown }): Promise<void> {
    return this.#calls.governor.recordMessage(this.runId, message);
  }

  /** Ends the run: calls decided but never completed are recorded as such, then `run-end`. */
  end(status: 'completed' | 'failed' | 'cancelled' = 'completed'): Promise<void> {
    return this.#calls.end(status);
  }

  #spec(name: string, tool: Tool | undefined) {
    let spec = this.#specs.get(name);
    if (!spec) {
      spec = toolSpecOf(name, tool, this.#extras[name]);
      this.#specs.set(name, spec);
    }
    return spec;
  }

  async #decide(key: string, name: string, input: unknown, tool: Tool | undefined): Promise<GovernedCall> {
    const specs = tool ? [await this.#spec(name, tool)] : [];
    const [call] = await this.#calls.decide([{ id: key || null, tool: name, arguments: input }], {
      keys: [key],
      specs,
    });
    return call as GovernedCall;
  }

  /** The pending call under `key`, or one adopted from the callgate approval named in `part`. */
  #pendingCall(key: string, tool: string | undefined, part: ApprovalRequestPart): GovernedCall | undefined {
    const known = this.#calls.all(key).find((call) => !call.ended && call.status === 'pending');
    if (known) return known;
    const approvalId = approvalIdIn(part.reason);
    return approvalId ? this.#calls.adopt(key, tool, approvalId) : undefined;
  }

  async #approve(input: ApprovalInput, mode: ApprovalMode): Promise<ToolApprovalStatus> {
    const { toolCall, tools, messages } = input;
    const key = toolCall.toolCallId ?? '';
    const resumed = approvedRequestFor(messages, key);
    if (resumed) return this.#resume(key, toolCall.toolName, toolCall.input, resumed);
    const call = await this.#decide(
      key,
      toolCall.toolName,
      toolCall.input,
      tools?.[toolCall.toolName] as Tool | undefined,
    );
    if (call.status === 'allowed')
      return { type: 'approved', reason: call.verdict?.decision?.reason ?? 'allowed' };
    if (call.status === 'refused') return this.#deny(call, call.error as Refusal);
    if (mode === 'wait') {
      const refusal = await this.#calls.settle(call);
      return refusal
        ? this.#deny(call, refusal)
        : { type: 'approved', reason: `approved in callgate (${call.approvalId})` };
    }
    const reason = call.verdict?.approval?.reason ?? 'callgate asks a person';
    return { type: 'user-approval', reason: requestReason(reason, call.approvalId as string) };
  }

  /** The SDK re-validates a call approved in an earlier turn: clear it only if callgate approved it. */
  async #resume(
    key: string,
    tool: string,
    input: unknown,
    request: ApprovalRequestPart,
  ): Promise<ToolApprovalStatus> {
    const call = this.#pendingCall(key, tool, request);
    if (!call) return { type: 'denied', reason: refusalText(noApproval(key)) };
    const refusal = await this.#calls.settle(call);
    if (refusal) return this.#deny(call, refusal);
    if (runArguments(call, input) === undefined) return this.#deny(call, changed(call));
    return { type: 'approved', reason: `approved in callgate (${call.approvalId})` };
  }

  async #deny(call: GovernedCall, error: Refusal): Promise<ToolApprovalStatus> {
    await this.#calls.refuse(call, error);
    return { type: 'denied', reason: refusalText(error) };
  }

  #repair(next: ToolCallRepairFunction<ToolSet> | undefined): ToolCallRepairFunction<ToolSet> {
    return async (options) => {
      const repaired = next ? await next(options) : null;
      if (repaired) return repaired;
      const { toolCall, tools, error } = options;
      const key = toolCall.toolCallId ?? '';
      const tool = tools?.[toolCall.toolName] as Tool | undefined;
      const call = await this.#decide(key, toolCall.toolName, toolCall.input, tool);
      if (call.status === 'pending' && call.approvalId) {
        await this.#calls.governor.withdrawApproval(call.approvalId, 'the AI SDK could not read the call');
      }
      const refusal: Refusal =
        call.status === 'refused'
          ? (call.error as Refusal)
          : { kind: tool ? 'tool-args-invalid' : 'tool-not-found', message: error.message };
      await this.#calls.refuse(call, refusal);
      return null;
    };
  }

  /** Clears a call for `execute`: its decided arguments and the started call, or the refusal to return. */
  async #begin(
    name: string,
    tool: Tool,
    input: unknown,
    options: ToolExecutionOptions<never>,
  ): Promise<{ started: StartedCall; args: Record<string, unknown> } | { error: Refusal }> {
    const key = options.toolCallId ?? '';
    const call = this.#calls.open(key) ?? (await this.#decide(key, name, input, tool));
    if (call.status !== 'refused' && runArguments(call, input) === undefined) {
      const error = changed(call);
      await this.#calls.refuse(call, error);
      return { error };
    }
    const started = await this.#calls.start(call, options.abortSignal);
    if ('error' in started) return { error: started.error };
    return { started, args: runArguments(call, input) ?? {} };
  }

  async #execute(
    name: string,
    tool: Tool,
    execute: ExecuteFunction,
    input: unknown,
    options: ToolExecutionOptions<never>,
  ): Promise<unknown> {
    const begun = await this.#begin(name, tool, input, options);
    if ('error' in begun) return { error: begun.error };
    let result: unknown;
    try {
      result = await execute(begun.args, options);
    } catch (error) {
      await this.#calls.complete(begun.started, { ok: false, error });
      throw error;
    }
    await this.#calls.complete(begun.started, { ok: true, result });
    return result;
  }

  /** A streaming tool: passes its outputs through and records the last one as the call's result. */
  async *#executeStream(
    name: string,
    tool: Tool,
    execute: ExecuteFunction,
    input: unknown,
    options: ToolExecutionOptions<never>,
  ): AsyncGenerator<unknown> {
    const begun = await this.#begin(name, tool, input, options);
    if ('error' in begun) {
      yield { error: begun.error };
      return;
    }
    let last: unknown = null;
    try {
      for await (const output of execute(begun.args, options) as AsyncIterable<unknown>) {
        last = output;
        yield output;
      }
    } catch (error) {
      await this.#calls.complete(begun.started, { ok: false, error });
      throw error;
    }
    await this.#calls.complete(begun.started, { ok: true, result: last });
  }
}

function noApproval(toolCallId: string): Refusal {
  return {
    kind: 'grant-invalid',
    message: `the AI SDK approved call ${JSON.stringify(toolCallId)}, but callgate has no approval for it`,
    call_id: toolCallId,
  };
}

function changed(call: GovernedCall): Refusal {
  return {
    kind: 'grant-invalid',
    message: `the arguments of call ${call.callId} changed after callgate decided it`,
    call_id: call.callId,
  };
}
