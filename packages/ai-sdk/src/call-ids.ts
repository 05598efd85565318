// Tool call ids the AI SDK cannot key a history by: a step's calls with an empty id, or with an
// id another call of the same step already has. The SDK pairs each result with its call by id,
// so such calls would share one result (or lose theirs); providers reject the history. A model
// middleware gives each such call callgate's id before the SDK sees the step.
import type { LanguageModelMiddleware } from 'ai';

/** A `tool-call` part of a model response (generate content or stream part). */
export interface ModelToolCall {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: string;
  providerExecuted?: boolean;
}

/**
 * Decides the calls of a step that need callgate's id (the model gave an empty or a repeated
 * one) and returns the id each is known by from now on, in order.
 */
export type IdentifyCalls = (calls: readonly ModelToolCall[]) => Promise<string[]>;

/** True for a step's calls (in order) whose id cannot key the history: empty, or seen earlier in the step. */
export function unkeyable(calls: readonly { toolCallId: string }[]): boolean[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    const bad = call.toolCallId === '' || seen.has(call.toolCallId);
    seen.add(call.toolCallId);
    return bad;
  });
}

function isToolCall(part: unknown): part is ModelToolCall {
  const candidate = part as Partial<ModelToolCall> | null;
  return (
    candidate?.type === 'tool-call' && typeof candidate.toolCallId === 'string' && !candidate.providerExecuted
  );
}

/**
 * The model middleware (`wrapLanguageModel({ model, middleware })`) that gives every call of a
 * step an id of its own: calls with an empty or repeated id get the id `identify` returns
 * (callgate's minted id), in generated content and in streamed `tool-call` parts alike.
 * Streamed `tool-input-*` parts with an empty id, or with an id another call's input already
 * started under, are dropped: they cannot be matched to their call (the call itself still
 * arrives, complete, as its `tool-call` part).
 */
export function callIdsMiddleware(identify: IdentifyCalls): LanguageModelMiddleware {
  return {
    specificationVersion: 'v4',
    async wrapGenerate({ doGenerate }) {
      const result = await doGenerate();
      const calls = result.content.filter(isToolCall);
      const bad = unkeyable(calls);
      const chosen = calls.filter((_call, index) => bad[index]);
      if (chosen.length === 0) return result;
      const ids = await identify(chosen);
      const replaced = new Map(chosen.map((call, index) => [call, ids[index] as string]));
      return {
        ...result,
        content: result.content.map((part) => {
          const id = replaced.get(part as ModelToolCall);
          return id === undefined ? part : { ...part, toolCallId: id };
        }),
      };
    },
    async wrapStream({ doStream }) {
      const result = await doStream();
      const seen = new Set<string>();
      const started = new Set<string>();
      const ambiguous = new Set<string>(['']);
      const stream = result.stream.pipeThrough(
        new TransformStream({
          async transform(part, controller) {
            if (part.type === 'tool-input-start') {
              if (started.has(part.id)) ambiguous.add(part.id);
              started.add(part.id);
            }
            if (
              (part.type === 'tool-input-start' ||
                part.type === 'tool-input-delta' ||
                part.type === 'tool-input-end') &&
              ambiguous.has(part.id)
            )
              return;
            if (isToolCall(part)) {
              const bad = part.toolCallId === '' || seen.has(part.toolCallId);
              seen.add(part.toolCallId);
              if (bad) {
                const [id] = await identify([part]);
                controller.enqueue({ ...part, toolCallId: id as string });
                return;
              }
            }
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream };
    },
  };
}
