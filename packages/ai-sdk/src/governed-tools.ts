// The AI SDK tools of a gate: each `execute` runs a call only once callgate cleared it, with
// the decided arguments, after its grant is consumed; every outcome is recorded.
import {
  type GovernedCall,
  type GovernedCalls,
  type Refusal,
  runArguments,
  type StartedCall,
} from '@callgate/core/adapter';
import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';

type ExecuteFunction = (input: unknown, options: ToolExecutionOptions<never>) => unknown;

/** What the governed tools need of their gate: its calls, and how it decides one not decided yet. */
export interface CallSource {
  calls: GovernedCalls;
  decide(key: string, name: string, input: unknown, tool: Tool): Promise<GovernedCall>;
}

/** The refusal of a call whose arguments are not those callgate decided. */
export function changed(call: GovernedCall): Refusal {
  return {
    kind: 'grant-invalid',
    message: `the arguments of call ${call.callId} changed after callgate decided it`,
    call_id: call.callId,
  };
}

/**
 * `tools` with each `execute` wrapped: a call runs only once callgate cleared it (deciding it
 * here if no approval function did), with the decided arguments, after its grant is consumed;
 * its outcome is recorded. A refused call returns `{"error": {...}}` instead of running. Tools
 * without `execute` are returned as they are.
 */
export function governedTools<TOOLS extends ToolSet>(tools: TOOLS, source: CallSource): TOOLS {
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
          executeStream(source, name, tool, execute, input, options)
      : (input: unknown, options: ToolExecutionOptions<never>) =>
          executeOnce(source, name, tool, execute, input, options);
    wrapped[name] = { ...tool, execute: governed } as Tool;
  }
  return wrapped as TOOLS;
}

/** Clears a call for `execute`: its decided arguments and the started call, or the refusal to return. */
async function begin(
  source: CallSource,
  name: string,
  tool: Tool,
  input: unknown,
  options: ToolExecutionOptions<never>,
): Promise<{ started: StartedCall; args: Record<string, unknown> } | { error: Refusal }> {
  const { calls } = source;
  const key = options.toolCallId ?? '';
  const call = calls.open(key) ?? (await source.decide(key, name, input, tool));
  if (call.status !== 'refused' && runArguments(call, input) === undefined) {
    const error = changed(call);
    await calls.refuse(call, error);
    return { error };
  }
  const started = await calls.start(call, options.abortSignal);
  if ('error' in started) return { error: started.error };
  return { started, args: runArguments(call, input) ?? {} };
}

async function executeOnce(
  source: CallSource,
  name: string,
  tool: Tool,
  execute: ExecuteFunction,
  input: unknown,
  options: ToolExecutionOptions<never>,
): Promise<unknown> {
  const begun = await begin(source, name, tool, input, options);
  if ('error' in begun) return { error: begun.error };
  let result: unknown;
  try {
    result = await execute(begun.args, options);
  } catch (error) {
    await source.calls.complete(begun.started, { ok: false, error });
    throw error;
  }
  await source.calls.complete(begun.started, { ok: true, result });
  return result;
}

/** A streaming tool: passes its outputs through and records the last one as the call's result. */
async function* executeStream(
  source: CallSource,
  name: string,
  tool: Tool,
  execute: ExecuteFunction,
  input: unknown,
  options: ToolExecutionOptions<never>,
): AsyncGenerator<unknown> {
  const begun = await begin(source, name, tool, input, options);
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
    await source.calls.complete(begun.started, { ok: false, error });
    throw error;
  }
  await source.calls.complete(begun.started, { ok: true, result: last });
}
