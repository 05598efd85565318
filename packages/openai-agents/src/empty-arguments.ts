// Argument text as the model wrote it, before the Agents SDK reads it. The SDK parses it with
// `JSON.parse`: a call whose text does not parse is forced to an approval and never runs, and
// its text is hidden (`""`) from the tool guardrails. So the model of a governed agent
// - gives calls with empty (or blank) text `{}`: callgate reads `""` as no arguments (`{}`) and
//   so, now, does the SDK, instead of callgate allowing a call the SDK then refuses to run;
// - keeps the text of each call that does not parse, so callgate decides (and refuses) the
//   call on what the model wrote, in the guardrail, before the SDK interrupts the run for it.
import type { Model, ModelResponse, StreamEvent } from '@openai/agents';

type OutputItem = ModelResponse['output'][number];

/** True when the SDK can read `text` as a function call's arguments. */
export function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function readable(item: OutputItem, unparsed: Map<string, string>): OutputItem {
  const call = item as OutputItem & { type?: string; arguments?: unknown; callId?: string };
  if (call.type !== 'function_call' || typeof call.arguments !== 'string') return item;
  if (call.arguments.trim() === '') return { ...call, arguments: '{}' } as OutputItem;
  if (call.callId && !parses(call.arguments)) unparsed.set(call.callId, call.arguments);
  return item;
}

function readableResponse<R extends { output: OutputItem[] }>(response: R, unparsed: Map<string, string>): R {
  return { ...response, output: response.output.map((item) => readable(item, unparsed)) };
}

/** True for a model object (an instance of the SDK's `Model` interface), not a model name. */
export function isModel(model: unknown): model is Model {
  return (
    typeof model === 'object' &&
    model !== null &&
    typeof (model as Model).getResponse === 'function' &&
    typeof (model as Model).getStreamedResponse === 'function'
  );
}

/**
 * `model` with function calls whose argument text is empty (or blank) given `{}` instead, in
 * responses and in streamed `response_done` events; the text of calls that does not parse is
 * kept in `unparsed` by call id (the reader deletes what it took). Everything else passes
 * unchanged.
 */
export function readableArgumentsModel(model: Model, unparsed: Map<string, string>): Model {
  // The model's other members (settings, retry advice, ...) stay reachable through the prototype.
  const wrapped: Model = Object.create(model);
  return Object.assign(wrapped, {
    async getResponse(request: Parameters<Model['getResponse']>[0]) {
      return readableResponse(await model.getResponse(request), unparsed);
    },
    async *getStreamedResponse(request: Parameters<Model['getStreamedResponse']>[0]) {
      for await (const event of model.getStreamedResponse(request)) {
        const done = event as StreamEvent & { type: string; response?: { output: OutputItem[] } };
        yield done.type === 'response_done' && done.response
          ? ({ ...done, response: readableResponse(done.response, unparsed) } as StreamEvent)
          : event;
      }
    },
  });
}
