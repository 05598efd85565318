// What a governed function tool takes from the run context rather than from the model: values
// the SDK hands a tool in its run context (`execute(input, runContext)`) are arguments the model
// did not send. Declared, they are decided with the call as its `injected` values (DESIGN §8,
// docs/ledger.md "Invariants of the record" 5) and set over the model's arguments when it runs.
import type { RunContext, tool as sdkTool } from '@openai/agents';

/**
 * What a governed tool takes from the run context rather than from the model, by argument name:
 * called with the call's run context when callgate decides the call; the values must be JSON.
 * Return `undefined` or `{}` when nothing is injected.
 */
export type InjectedValues = (
  // biome-ignore lint/suspicious/noExplicitAny: run contexts of any context type
  runContext: RunContext<any>,
) => Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>;

/** Options of {@link AgentsGate.tool}: the SDK's `tool()` options and what the tool takes from the run context. */
export type GovernedToolOptions = Parameters<typeof sdkTool>[0] & {
  /**
   * The values the tool takes from the run context (e.g. the signed-in user's id), which the model
   * did not send: decided with the call as its `injected` values (the ledger's
   * `effective-arguments` record, the reviewer's `Approval.injected`) and set over the model's
   * arguments in the input `execute` receives. Read them from that input, not from the run
   * context: the tool then runs with exactly the values callgate decided (or a person approved).
   */
  injected?: InjectedValues;
};

/** The run context of a result, a RunState or `{ state, runContext }`, when it has one. */
export function runContextOf(from: unknown): RunContext | undefined {
  const value = from as { runContext?: RunContext; _context?: RunContext; state?: { _context?: RunContext } };
  return value.runContext ?? value._context ?? value.state?._context;
}
