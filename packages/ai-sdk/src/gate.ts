import type { Logger } from '@callgate/core';
import type { ApprovalAnswerer, Governor } from '@callgate/core/adapter';
import {
  type GovernedCall,
  GovernedCalls,
  mintCallId,
  type Refusal,
  refusalText,
  runArguments,
} from '@callgate/core/adapter';
import {
  type GenericToolApprovalFunction,
  type LanguageModel,
  type LanguageModelMiddleware,
  type ModelMessage,
  type Tool,
  type ToolApprovalResponse,
  type ToolApprovalStatus,
  type ToolCallRepairFunction,
  type ToolSet,
  wrapLanguageModel,
} from 'ai';
import {
  type ApprovalRequestPart,
  approvedRequestFor,
  isApprovalRequest,
  requestReason,
  requestToolCallId,
} from './approval-parts.js';
import { callIdsMiddleware, type ModelToolCall } from './call-ids.js';
import { changed, governedTools } from './governed-tools.js';
import { type ForwardedAnswer, forwardApprovalResponses } from './in-app-approvals.js';
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
  readonly #tools = new Map<string, Tool>();
  /** Keys of calls the model middleware decided (under callgate's id), not yet seen by the SDK's hooks. */
  readonly #identified = new Set<string>();

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

  /**
   * `model` with the gate's model middleware ({@link middleware}): pass it as the `model` of
   * `generateText`, `streamText` or `ToolLoopAgent` whenever the model may give calls an empty
   * or repeated id.
   */
  model(model: Exclude<LanguageModel, string>): Exclude<LanguageModel, string> {
    return wrapLanguageModel({
      model: model as Parameters<typeof wrapLanguageModel>[0]['model'],
      middleware: this.middleware,
    });
  }

  /**
   * A model middleware (`wrapLanguageModel`) that gives each call of a step an id of its own:
   * calls the model gave an empty id, or an id another call of the step has, are decided as
   * calls without an id and take callgate's minted id (recorded as minted), so every call gets
   * exactly one result in the history the next model call reads.
   */
  readonly middleware: LanguageModelMiddleware = callIdsMiddleware((calls) => this.#identify(calls));

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
    for (const [name, tool] of Object.entries(tools)) this.#tools.set(name, tool);
    return governedTools(tools, {
      calls: this.#calls,
      decide: (key, name, input, tool) => this.#decide(key, name, input, tool),
    });
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
        const call = await this.#pendingCall(requestToolCallId(part), part.toolCall?.toolName);
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

  /**
   * In-app approvals: forwards the chat app's answers in `messages` (useChat's
   * `tool-approval-response` parts, converted with `convertToModelMessages`) to callgate as
   * answers of `reviewer` — the signed-in user's reviewer key (a `CallgateClient`), so the
   * ledger names that user. Call it in the route handler before `streamText`; the approved calls
   * then run (see {@link forwardApprovalResponses}).
   */
  forwardApprovalResponses(
    messages: readonly ModelMessage[],
    options: { reviewer: ApprovalAnswerer },
  ): Promise<ForwardedAnswer[]> {
    return forwardApprovalResponses(messages, {
      governor: this.#calls.governor,
      runId: this.runId,
      reviewer: options.reviewer,
    });
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

  /** Decides calls the model gave no usable id as calls without one; returns callgate's ids. */
  async #identify(calls: readonly ModelToolCall[]): Promise<string[]> {
    const specs = await Promise.all(
      [...new Set(calls.map((call) => call.toolName))]
        .filter((name) => this.#tools.has(name))
        .map((name) => this.#spec(name, this.#tools.get(name))),
    );
    const decided = await this.#calls.decide(
      calls.map((call) => ({ id: null, tool: call.toolName, arguments: call.input })),
      { keys: calls.map(() => ''), specs },
    );
    return decided.map((call) => {
      // A call callgate could not decide (it is refused) still needs an id of its own.
      this.#calls.rekey(call, call.callId || mintCallId());
      this.#identified.add(call.key);
      return call.key;
    });
  }

  /** The call the model middleware decided under `key`, once: the SDK's hooks then take it over. */
  #identifiedCall(key: string): GovernedCall | undefined {
    if (!this.#identified.delete(key)) return undefined;
    return this.#calls.open(key);
  }

  /**
   * The pending call under `key`, or one adopted from the approval callgate asked for that call
   * of this run (e.g. when the chat's next request reaches another process).
   */
  async #pendingCall(key: string, tool: string | undefined): Promise<GovernedCall | undefined> {
    const known = this.#calls.all(key).find((call) => !call.ended && call.status === 'pending');
    if (known) return known;
    const approval = key === '' ? undefined : await this.#calls.governor.findApproval(this.runId, key);
    return approval ? this.#calls.adopt(key, tool, approval.id) : undefined;
  }

  async #approve(input: ApprovalInput, mode: ApprovalMode): Promise<ToolApprovalStatus> {
    const { toolCall, tools, messages } = input;
    const key = toolCall.toolCallId ?? '';
    const resumed = approvedRequestFor(messages, key);
    if (resumed) return this.#resume(key, toolCall.toolName, toolCall.input);
    const call =
      this.#identifiedCall(key) ??
      (await this.#decide(
        key,
        toolCall.toolName,
        toolCall.input,
        tools?.[toolCall.toolName] as Tool | undefined,
      ));
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
  async #resume(key: string, tool: string, input: unknown): Promise<ToolApprovalStatus> {
    const call = await this.#pendingCall(key, tool);
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
      const call =
        this.#identifiedCall(key) ?? (await this.#decide(key, toolCall.toolName, toolCall.input, tool));
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
}

function noApproval(toolCallId: string): Refusal {
  return {
    kind: 'grant-invalid',
    message: `the AI SDK approved call ${JSON.stringify(toolCallId)}, but callgate has no approval for it`,
    call_id: toolCallId,
  };
}
