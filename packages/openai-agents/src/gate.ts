import type { Logger } from '@callgate/core';
import type { Governor } from '@callgate/core/adapter';
import { type GovernedCall, GovernedCalls, type Refusal, refusalText } from '@callgate/core/adapter';
import { CallgateError, type ToolSpec } from '@callgate/protocol';
import {
  Agent,
  type CallModelInputFilter,
  type FunctionTool,
  type RunContext,
  type RunState,
  type RunToolApprovalItem,
  tool as sdkTool,
  type Tool,
} from '@openai/agents';
import { isModel, readableArgumentsModel } from './empty-arguments.js';
import { type GovernedToolOptions, type InjectedValues, runContextOf } from './injected-values.js';
import { checkMcpServers } from './mcp-servers.js';
import { noteRefusal, refusalsFilter } from './model-input.js';
import { currentRunId } from './nested-runs.js';
import { type CallgateRunContext, callgateOf, type WithCallgate } from './run-context.js';
import { type GateHost, isGoverned, runGoverned, withCallgateHooks } from './tool-hooks.js';
import { type ToolSpecExtras, toolSpecOf } from './tool-specs.js';

/** Options of {@link createAgentsGate}. */
export interface AgentsGateOptions {
  /** callgate in this process (`localGovernor(engine)`) or behind a server (`remoteGovernor(client)`). */
  governor: Governor;
  /** Who runs begun without a principal act for. Default: `openai-agents` in-process; against a server, the API key's name. */
  principal?: string;
  /** Longest wait for a person's answer, in ms. Default 5 minutes. */
  approvalWaitMs?: number;
  /** What callgate should know of each tool beyond its schema: annotations, trust, idempotency key. */
  toolSpecs?: Record<string, ToolSpecExtras>;
  logger?: Logger;
  /**
   * The URL of the callgate server whose MCP gateway (`<gatewayUrl>/mcp/<profile>`) governed
   * agents may use as MCP servers: the gateway gates every call itself. Without it, an agent
   * with MCP servers is refused.
   */
  gatewayUrl?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own tool type parameters
type AnyFunctionTool = FunctionTool<any, any, any>;
// biome-ignore lint/suspicious/noExplicitAny: agents of any context and output
type AnyAgent = Agent<any, any>;
type ToolOptions = Parameters<typeof sdkTool>[0];
type ToolCallDetails = Parameters<AnyFunctionTool['invoke']>[2];

/** Creates the gate between callgate and OpenAI Agents JS; one per process is enough. */
export function createAgentsGate(options: AgentsGateOptions): AgentsGate {
  return new AgentsGate(options);
}

/**
 * The gate between callgate and OpenAI Agents JS. Governed tools decide each call in
 * `needsApproval` (an `ask` becomes the SDK's interruption), refuse in a tool input guardrail
 * (the model reads `{"error": {...}}`), and run only with a consumed grant, recording the
 * outcome. Governed agents and tools are built once; each run is a callgate run, found through
 * the run context ({@link begin}), so one agent serves many runs at once.
 */
export class AgentsGate {
  readonly #options: AgentsGateOptions;
  /** The calls of each run (by run id) of each run context object. */
  readonly #sessions = new WeakMap<object, Map<string, GovernedCalls>>();
  readonly #agents = new WeakMap<AnyAgent, AnyAgent>();
  readonly #governedAgents = new WeakSet<AnyAgent>();
  /** The spec of each governed tool, by name: sent with the first decision that names it. */
  readonly #specs = new Map<string, ToolSpec>();
  /** What the model wrote for calls whose arguments the SDK cannot parse, by call id. */
  readonly #unparsed = new Map<string, string>();
  /** What each governed tool built by {@link tool} takes from the run context, by tool name. */
  readonly #injected = new Map<string, InjectedValues>();
  readonly #host: GateHost = {
    session: (context) => this.#session(context),
    callFor: (session, stored, key, name, rawArguments, runContext) =>
      this.#callFor(session, stored, key, name, rawArguments, runContext),
    refuse: (session, stored, call, refusal) => this.#refuse(session, stored, call, refusal),
    unparsed: this.#unparsed,
    startChildRun: async (stored, callId) => {
      const principal = stored.principal ?? this.#options.principal;
      const { run_id } = await this.#options.governor.startRun({
        ...(principal !== undefined ? { principal } : {}),
        framework: 'openai-agents',
        parent_run_id: stored.run_id,
        labels: { 'callgate.parent_call_id': callId },
      });
      return run_id;
    },
    endRun: (runId, status) => this.#options.governor.endRun(runId, status),
  };

  constructor(options: AgentsGateOptions) {
    this.#options = options;
  }

  /**
   * Starts a callgate run and returns `context` (a new object when none is given) carrying it
   * under `callgate`: pass it as `run(agent, input, { context })`.
   */
  async begin<T extends object = Record<string, unknown>>(
    context?: T,
    start: { principal?: string; labels?: Record<string, string>; parentRunId?: string } = {},
  ): Promise<WithCallgate<T>> {
    const { run_id } = await this.#options.governor.startRun({
      principal: start.principal ?? this.#options.principal,
      framework: 'openai-agents',
      ...(start.labels ? { labels: start.labels } : {}),
      ...(start.parentRunId ? { parent_run_id: start.parentRunId } : {}),
    });
    const target = (context ?? {}) as WithCallgate<T>;
    const principal = start.principal ?? this.#options.principal;
    target.callgate = { run_id, approvals: {}, ...(principal !== undefined ? { principal } : {}) };
    return target;
  }

  /** The callgate run of a result, a RunState or a run context. */
  runIdOf(from: { runContext: RunContext } | RunState<unknown, AnyAgent> | object): string {
    return callgateOf(contextOf(from)).run_id;
  }

  /**
   * A copy of `agent` whose function tools are governed, as are the agents it hands off to.
   * @throws CallgateError `request-invalid` for what callgate cannot gate from here: hosted,
   *   computer, shell and apply-patch tools, MCP servers other than callgate's own MCP gateway
   *   (see `gatewayUrl`), and handoffs to agents that are not governed.
   */
  agent<A extends AnyAgent>(agent: A): A {
    if (this.#governedAgents.has(agent)) return agent;
    const known = this.#agents.get(agent);
    if (known) return known as A;
    checkMcpServers(agent.name, agent.mcpServers, this.#options.gatewayUrl);
    const clone = agent.clone({
      tools: agent.tools.map((tool: Tool) => this.#govern(tool)),
      ...(isModel(agent.model) ? { model: readableArgumentsModel(agent.model, this.#unparsed) } : {}),
    }) as A;
    this.#agents.set(agent, clone);
    this.#governedAgents.add(clone);
    clone.handoffs = agent.handoffs.map((handoff) => {
      if (handoff instanceof Agent) return this.agent(handoff);
      if (!this.#governedAgents.has(handoff.agent)) {
        throw new CallgateError(
          'request-invalid',
          `agent ${agent.name} hands off to ${handoff.agent.name}, which is not governed: build the handoff from gate.agent(...)`,
        );
      }
      return handoff;
    });
    return clone;
  }

  /**
   * An agent as a tool of another agent, governed twice over: the call to it is decided like any
   * tool call, and the inner agent's own tools are governed in a child run (`parent_run_id`) whose
   * run-start names the outer call (label `callgate.parent_call_id`).
   */
  agentTool(agent: AnyAgent, options: Parameters<AnyAgent['asTool']>[0]): AnyFunctionTool {
    // The inner run reads refused calls as the outer one does (run options are not inherited).
    const runConfig = {
      ...options.runConfig,
      ...this.runOptions({ callModelInputFilter: options.runConfig?.callModelInputFilter }),
    };
    const asTool = this.agent(agent).asTool({ ...options, runConfig }) as AnyFunctionTool;
    return this.#governInvoke(asTool, { agentTool: true });
  }

  /**
   * Like the SDK's `tool()`, governed; a thrown error is recorded as the call's `error` outcome.
   * `injected` declares what the tool takes from the run context (see {@link GovernedToolOptions}).
   */
  tool(options: GovernedToolOptions): AnyFunctionTool {
    const { injected, ...sdkOptions } = options;
    const name = (sdkOptions.name ?? (sdkOptions.execute as { name?: string }).name ?? '') as string;
    const execute = sdkOptions.execute as (
      input: unknown,
      context?: RunContext,
      details?: ToolCallDetails,
    ) => unknown;
    const built = sdkTool({
      ...sdkOptions,
      execute: async (input: unknown, runContext?: RunContext, details?: ToolCallDetails) => {
        const key = details?.toolCall?.callId ?? '';
        return this.#run(
          runContext?.context,
          key,
          name,
          input,
          (args) => execute(args, runContext, details),
          {
            ...(runContext ? { runContext } : {}),
          },
        );
      },
    } as ToolOptions) as AnyFunctionTool;
    if (injected) this.#injected.set(built.name, injected);
    else this.#injected.delete(built.name);
    return this.#hooks(built);
  }

  /**
   * A governed copy of a function tool (one built elsewhere, e.g. by `asTool`). Its `invoke` is
   * wrapped: the outcome recorded is what `invoke` returns (which for `tool()` tools includes
   * their own error message); prefer {@link tool} to record errors as errors.
   */
  governTool<T extends AnyFunctionTool>(tool: T): T {
    return this.#governInvoke(tool, {});
  }

  #governInvoke<T extends AnyFunctionTool>(tool: T, options: { agentTool?: boolean }): T {
    if (isGoverned(tool)) return tool;
    const invoke = tool.invoke;
    const wrapped = {
      ...tool,
      invoke: async (runContext: RunContext, input: string, details?: ToolCallDetails) => {
        const key = details?.toolCall?.callId ?? '';
        let parsed: unknown;
        try {
          parsed = input.trim() === '' ? {} : JSON.parse(input);
        } catch {
          parsed = input;
        }
        return this.#run(
          runContext.context,
          key,
          tool.name,
          parsed,
          (args) => invoke(runContext, JSON.stringify(args), details),
          options,
        );
      },
    } as T;
    return this.#hooks(wrapped);
  }

  /**
   * Answers the run's interruptions for governed calls with callgate's decisions: waits (up to
   * `waitMs`, default the gate's wait limit) for each approval, then approves the interruption
   * in the SDK state, or rejects it with `{"error": {...}}` as the message the model reads. An
   * approval still pending then is withdrawn. Run the agent again with the state afterwards.
   */
  async settle(
    from: { state: RunState<unknown, AnyAgent>; runContext: RunContext } | RunState<unknown, AnyAgent>,
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const state = 'getInterruptions' in from ? from : from.state;
    const context = contextOf(from);
    const stored = callgateOf(context);
    await Promise.all(
      state.getInterruptions().map(async (item: RunToolApprovalItem) => {
        const raw = item.rawItem;
        if (raw.type !== 'function_call') return;
        const governed = item.agent.tools.some(
          (tool: Tool) => tool.type === 'function' && tool.name === item.name && isGoverned(tool),
        );
        if (!governed) return;
        // A call of an inner agent belongs to its agent tool's child run.
        const session = this.#session(context, stored.approvalRuns?.[raw.callId]);
        const call = await this.#callFor(
          session,
          stored,
          raw.callId,
          raw.name,
          raw.arguments,
          runContextOf(from),
        );
        const refusal = await session.settle(call, options.waitMs ?? session.approvalWaitMs, options.signal);
        if (refusal) {
          await this.#refuse(session, stored, call, refusal);
          state.reject(item, { message: refusalText(refusal) });
        } else {
          state.approve(item);
        }
      }),
    );
  }

  /**
   * The run options a governed run needs: `run(agent, input, { context, ...gate.runOptions() })`.
   * - `callModelInputFilter` shows the model each call callgate refused as the provider format
   *   shows a call that did not run (status `incomplete`), with callgate's `{"error": {...}}` as
   *   its output; the app's own filter (`options.callModelInputFilter`) runs afterwards.
   * - `toolExecution.preApprovalInputGuardrails` lets callgate refuse a call the SDK would
   *   interrupt for approval although it cannot run (its arguments do not parse) before the
   *   interruption, so only calls callgate asks a person about interrupt the run.
   */
  runOptions(options: { callModelInputFilter?: CallModelInputFilter | undefined } = {}): {
    callModelInputFilter: CallModelInputFilter;
    toolExecution: { preApprovalInputGuardrails: true };
  } {
    return {
      callModelInputFilter: refusalsFilter(options.callModelInputFilter),
      toolExecution: { preApprovalInputGuardrails: true },
    };
  }

  /** Ends the callgate run of a result, a RunState or a run context. */
  async finish(
    from: { runContext: RunContext } | RunState<unknown, AnyAgent> | object,
    status: 'completed' | 'failed' | 'cancelled' = 'completed',
  ): Promise<void> {
    const context = contextOf(from);
    const { run_id } = callgateOf(context);
    await this.#options.governor.endRun(run_id, status);
    if (typeof context === 'object' && context !== null) this.#sessions.delete(context);
  }

  #govern(tool: Tool): Tool {
    if (tool.type === 'function') return this.governTool(tool as AnyFunctionTool);
    throw new CallgateError(
      'request-invalid',
      `tool ${(tool as { name?: string }).name ?? tool.type} is a ${tool.type} tool, which callgate cannot gate from the Agents SDK`,
    );
  }

  /** The calls of the run in `context` (kept per context object; rebuilt after a restore). */
  #session(context: unknown, runId?: string): GovernedCalls {
    const { run_id } = callgateOf(context);
    const id = runId ?? currentRunId() ?? run_id;
    const key = context as object;
    const sessions = this.#sessions.get(key) ?? new Map<string, GovernedCalls>();
    this.#sessions.set(key, sessions);
    const known = sessions.get(id);
    if (known) return known;
    const session = new GovernedCalls({
      governor: this.#options.governor,
      runId: id,
      ...(this.#options.approvalWaitMs !== undefined ? { approvalWaitMs: this.#options.approvalWaitMs } : {}),
      ...(this.#options.logger ? { logger: this.#options.logger } : {}),
    });
    sessions.set(id, session);
    return session;
  }

  /** The tracked call for `key`: open in this process, adopted from the context's approvals, or decided now. */
  async #callFor(
    session: GovernedCalls,
    stored: CallgateRunContext,
    key: string,
    name: string,
    rawArguments: unknown,
    runContext?: RunContext,
  ): Promise<GovernedCall> {
    const open = session.open(key);
    if (open) return open;
    const approvalId = stored.approvals[key];
    // Its injected values come with the approval: what the reviewer saw is what runs.
    if (approvalId) return session.adopt(key, name, approvalId);
    const spec = this.#specs.get(name) ?? toolSpecOf({ name }, this.#options.toolSpecs?.[name]);
    const injector = this.#injected.get(name);
    if (injector && !runContext)
      throw new CallgateError(
        'internal',
        `tool ${name} takes values from the run context, and call ${key || '(no id)'} came without one`,
      );
    const injected = injector && runContext ? await injector(runContext) : undefined;
    const [call] = await session.decide(
      [
        {
          id: key || null,
          tool: name,
          arguments: rawArguments,
          ...(injected && Object.keys(injected).length > 0 ? { injected } : {}),
        },
      ],
      { keys: [key], specs: [spec] },
    );
    return call as GovernedCall;
  }

  async #refuse(
    session: GovernedCalls,
    stored: CallgateRunContext,
    call: GovernedCall,
    refusal: Refusal,
  ): Promise<void> {
    await session.refuse(call, refusal);
    delete stored.approvals[call.key];
    noteRefusal(stored, call.key, refusalText(refusal));
  }
  /** Adds callgate's `needsApproval` and input guardrail to a function tool. */
  #hooks<T extends AnyFunctionTool>(tool: T): T {
    this.#specs.set(tool.name, toolSpecOf(tool, this.#options.toolSpecs?.[tool.name]));
    return withCallgateHooks(tool, this.#host);
  }

  #run(
    context: unknown,
    key: string,
    name: string,
    input: unknown,
    execute: (args: Record<string, unknown>) => unknown,
    options: { agentTool?: boolean; runContext?: RunContext } = {},
  ): Promise<unknown> {
    return runGoverned(this.#host, context, key, name, input, execute, options);
  }
}

function contextOf(from: unknown): unknown {
  const value = from as { runContext?: RunContext; _context?: RunContext; callgate?: unknown };
  if (value.runContext) return value.runContext.context;
  if (value._context) return value._context.context;
  return from;
}
