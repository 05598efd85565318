import type { GovernedCall } from './governed-calls.js';

/** JSON text of a value with object keys sorted, for comparing arguments by value. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, item) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(
          Object.keys(item as object)
            .sort()
            .map((key) => [key, (item as Record<string, unknown>)[key]]),
        )
      : item,
  );
}

/**
 * True when `given` (what a framework is about to run) is the call callgate decided on:
 * every decided argument has the same value, and `given` has no other arguments but those the
 * policy scrubbed (top-level keys callgate removed, which never reach the tool).
 */
export function sameArguments(decided: Record<string, unknown>, given: unknown): boolean {
  if (given === null || typeof given !== 'object' || Array.isArray(given))
    return Object.keys(decided).length === 0;
  const input = given as Record<string, unknown>;
  return Object.keys(decided).every(
    (key) => key in input && sortedJson(decided[key]) === sortedJson(input[key]),
  );
}

/**
 * The arguments a cleared call runs with: a reviewer's edit the policy allowed, or else the
 * framework's own input (values it may have parsed its own way) without the arguments callgate
 * scrubbed. Undefined when the input is not the call callgate decided: it must not run.
 */
export function runArguments(call: GovernedCall, input: unknown): Record<string, unknown> | undefined {
  const decided = call.arguments ?? call.verdict?.arguments ?? {};
  if (call.edited) return structuredClone(decided);
  if (!sameArguments(decided, input)) return undefined;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return {};
  return Object.fromEntries(Object.entries(input).filter(([key]) => key in decided));
}
