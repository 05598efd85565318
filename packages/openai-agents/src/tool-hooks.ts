// The hooks callgate adds to a governed function tool of the Agents SDK: `needsApproval` (an
// ask becomes the SDK's interruption), a tool input guardrail (a refusal becomes the message the
// model reads), and the wrapped execution (runs only with a consumed grant, records the outcome).
import type { GovernedCall, GovernedCalls, Refusal, StartedCall } from '@callgate/core/adapter';
import { refusalOf, refusalText, runArguments } from '@callgate/core/adapter';
import {
  defineToolInputGuardrail,
  type FunctionTool,
  type RunContext,
  ToolGuardrailFunctionOutputFactory,
  type ToolInputGuardrailDefinition,
} from '@openai/agents';
import { parses } from './empty-arguments.js';
import { noteRefusal } from './model-input.js';
import { markInterrupted, resume, runNested, suspend, suspendedCall } from './nested-runs.js';
import { type CallgateRunContext, callgateOf } from './run-context.js';

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own tool type parameters
type AnyFunctionTool = FunctionTool<any, any, any>;

const GOVERNED = Symbol.for('callgate.openai-agents.governed');

/** True when `tool` was put behind callgate by an `AgentsGate`. */
export function isGoverned(tool: unknown): boolean {
  return typeof tool === 'object' && tool !== null && GOVERNED in tool;
}

/** What the hooks need of their gate. */
export interface GateHost {
  /** The calls of the run in `context`. @throws CallgateError `gate-unavailable` without one. */
  session(context: unknown): GovernedCalls;
  /** The tracked call for `key`: open, adopted from the context's approvals, or decided now. */
  callFor(
    session: GovernedCalls,
    stored: CallgateRunContext,
    key: string,
    name: string,
    rawArguments: unknown,
    runContext?: RunContext,
  ): Promise<GovernedCall>;
  /** Records a refusal and notes what the model reads of it. */
  refuse(
    session: GovernedCalls,
    stored: CallgateRunContext,
    call: GovernedCall,
    refusal: Refusal,
  ): Promise<void>;
  /** What the model wrote for calls whose arguments the SDK cannot parse, by call id. */
  unparsed: Map<string, string>;
  /** Starts the child run of agent tool call `callId` of `stored`'s run; returns its id. */
  startChildRun(stored: CallgateRunContext, callId: string): Promise<string>;
  endRun(runId: string, status: 'completed' | 'failed'): Promise<void>;
}

/** The refusal of a call whose arguments are not those callgate decided. */
export function changed(call: GovernedCall): Refusal {
  return {
    kind: 'grant-invalid',
    message: `the arguments of call ${call.callId} changed after callgate decided it`,
    call_id: call.callId,
  };
}

function parseArguments(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `tool` with callgate's `needsApproval` and input guardrail (its own guardrails run after). */
export function withCallgateHooks<T extends AnyFunctionTool>(tool: T, host: GateHost): T {
  const guardrail: ToolInputGuardrailDefinition = defineToolInputGuardrail({
    name: 'callgate',
    run: async ({ context, toolCall }) => {
      let session: GovernedCalls;
      let stored: CallgateRunContext;
      try {
        session = host.session(context.context);
        stored = callgateOf(context.context);
      } catch (error) {
        return ToolGuardrailFunctionOutputFactory.rejectContent(refusalText(refusalOf(error)));
      }
      // An agent tool resumed after its inner run's interruption: started already.
      if (suspendedCall(stored, toolCall.callId)) return ToolGuardrailFunctionOutputFactory.allow();
      // Text the SDK cannot parse reaches the guardrail hidden (`""`): decide on what the model
      // wrote, kept by the governed agent's model; without it, let the SDK interrupt the run
      // (the SDK never runs such a call) and `settle` decides on the interruption's text.
      let text = toolCall.arguments;
      if (!parses(text)) {
        const kept = host.unparsed.get(toolCall.callId);
        if (kept === undefined) return ToolGuardrailFunctionOutputFactory.allow();
        host.unparsed.delete(toolCall.callId);
        text = kept;
      }
      const call = await host.callFor(session, stored, toolCall.callId, tool.name, text, context);
      // Before the SDK asked for approval (pre-approval guardrails): let the interruption happen.
      if (
        call.status === 'pending' &&
        !call.grant &&
        context.isToolApproved({ toolName: tool.name, callId: toolCall.callId }) === undefined
      ) {
        return ToolGuardrailFunctionOutputFactory.allow();
      }
      let refusal = await session.settle(call);
      if (!refusal && runArguments(call, parseArguments(toolCall.arguments)) === undefined)
        refusal = changed(call);
      if (refusal) {
        await host.refuse(session, stored, call, refusal);
        return ToolGuardrailFunctionOutputFactory.rejectContent(refusalText(refusal));
      }
      return ToolGuardrailFunctionOutputFactory.allow();
    },
  });
  const governed = {
    ...tool,
    needsApproval: async (runContext: RunContext, input: unknown, callId?: string) => {
      let session: GovernedCalls;
      let stored: CallgateRunContext;
      try {
        session = host.session(runContext.context);
        stored = callgateOf(runContext.context);
      } catch {
        return false; // the guardrail refuses the call (gate-unavailable)
      }
      const key = callId ?? '';
      if (suspendedCall(stored, key)) return false;
      const call = await host.callFor(session, stored, key, tool.name, input, runContext);
      if (call.status === 'pending' && call.approvalId) {
        stored.approvals[key] = call.approvalId;
        if (session.runId !== stored.run_id) {
          stored.approvalRuns ??= {};
          stored.approvalRuns[key] = session.runId;
        }
      }
      const asks = call.status === 'pending' && !call.grant;
      if (asks) markInterrupted();
      return asks;
    },
    inputGuardrails: [guardrail, ...(tool.inputGuardrails ?? [])],
    [GOVERNED]: true,
  };
  return governed as T;
}

/** Runs a call the guardrail cleared (deciding and settling it here if nothing did). */
export async function runGoverned(
  host: GateHost,
  context: unknown,
  key: string,
  name: string,
  input: unknown,
  execute: (args: Record<string, unknown>) => unknown,
  options: { agentTool?: boolean; runContext?: RunContext } = {},
): Promise<unknown> {
  let session: GovernedCalls;
  let stored: CallgateRunContext;
  try {
    session = host.session(context);
    stored = callgateOf(context);
  } catch (error) {
    return refusalText(refusalOf(error));
  }
  // An agent tool whose inner run stopped at an interruption is invoked again on resume: it
  // is the same call, started once (its duration counts from the resume).
  const suspended = suspendedCall(stored, key);
  let started: StartedCall;
  let args: Record<string, unknown>;
  if (suspended) {
    started = { call: suspended, startedAt: performance.now() };
    args = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  } else {
    const call = await host.callFor(session, stored, key, name, input, options.runContext);
    const begun = await session.start(call);
    delete stored.approvals[key];
    if ('error' in begun) {
      noteRefusal(stored, key, refusalText(begun.error));
      return refusalText(begun.error);
    }
    started = begun;
    // The values the tool declared it takes from the run context, as decided (or as approved):
    // set over the model's arguments, as the gate digested them (`effective-arguments`).
    args = { ...(runArguments(call, input) ?? call.arguments ?? {}), ...call.injected };
  }
  // An agent used as a tool runs its calls in a child run whose run-start names this call.
  let childRunId: string | undefined;
  if (options.agentTool) {
    childRunId = stored.children?.[key] ?? (await host.startChildRun(stored, started.call.callId));
    stored.children ??= {};
    stored.children[key] = childRunId;
  }
  const ended = async (status: 'completed' | 'failed') => {
    resume(stored, key);
    if (!childRunId) return;
    delete stored.children?.[key];
    await host.endRun(childRunId, status);
  };
  let outcome: { result: unknown; interrupted: boolean };
  try {
    outcome = await runNested(() => execute(args), childRunId);
  } catch (error) {
    await ended('failed');
    await session.complete(started, { ok: false, error });
    throw error;
  }
  if (outcome.interrupted) {
    suspend(stored, started.call);
    return outcome.result;
  }
  await ended('completed');
  await session.complete(started, { ok: true, result: outcome.result });
  return outcome.result;
}
