// What the model reads of a call callgate refused. The SDK writes every function call result
// with status `completed`, and for some refusals (a call whose arguments it could not parse) its
// own text instead of the message it was given. The Responses API gives a call that did not run
// the status `incomplete`; callgate's refusal body is what the model should read.
import type { AgentInputItem, CallModelInputFilter } from '@openai/agents';
import { type CallgateRunContext, callgateOf } from './run-context.js';

/** Notes that callgate refused the call `callId`, and what the model should read of it. */
export function noteRefusal(stored: CallgateRunContext, callId: string, text: string): void {
  if (callId === '') return;
  stored.refused ??= {};
  stored.refused[callId] = text;
}

/**
 * A `callModelInputFilter` (run option) that shows the model each call callgate refused as a
 * call that did not run: its `function_call_result` gets status `incomplete` and callgate's
 * `{"error": {...}}` as its output text. Calls with no refusal noted, and runs without callgate
 * state, pass unchanged; `next` (the app's own filter) runs afterwards.
 */
export function refusalsFilter(next?: CallModelInputFilter): CallModelInputFilter {
  return async (args) => {
    let refused: Record<string, string> | undefined;
    try {
      refused = callgateOf(args.context).refused;
    } catch {
      refused = undefined;
    }
    const input = refused
      ? args.modelData.input.map((item): AgentInputItem => {
          const result = item as AgentInputItem & { type?: string; callId?: string };
          const text =
            result.type === 'function_call_result' && result.callId ? refused[result.callId] : undefined;
          if (text === undefined) return item;
          return { ...result, status: 'incomplete', output: { type: 'text', text } } as AgentInputItem;
        })
      : args.modelData.input;
    const modelData = { ...args.modelData, input };
    return next ? next({ ...args, modelData }) : modelData;
  };
}
