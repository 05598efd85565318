/** Shortest string from an untrusted tool's output that provenance tracks. */
export const PROVENANCE_MIN_LENGTH = 8;
/** Most strings tracked per run; older ones are forgotten first. */
const MAX_TRACKED = 10_000;

/** Where a call's argument values came from. */
export interface ProvenanceResult {
  /** True when some argument value came from an `untrusted` tool's output earlier in the run. */
  untrusted: boolean;
  /** The untrusted tools whose output the arguments repeat, each once. */
  sources: string[];
}

function collectStrings(value: unknown, into: string[], depth = 0): void {
  if (depth > 64) return;
  if (typeof value === 'string') {
    if (value.length >= PROVENANCE_MIN_LENGTH) into.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collectStrings(item, into, depth + 1);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) collectStrings(item, into, depth + 1);
  }
}

/**
 * Tracks, for one run, the string values (8 characters or longer) that `untrusted` tools
 * returned, and tells whether a later call's arguments repeat one: an argument string that
 * contains such a value, or that is itself found inside one (a value copied out of a page).
 */
export class ProvenanceTracker {
  readonly #values = new Map<string, string>(); // value -> tool

  /** Remembers the strings in an untrusted tool's result. */
  observe(tool: string, result: unknown): void {
    const strings: string[] = [];
    collectStrings(result, strings);
    for (const value of strings) {
      this.#values.delete(value);
      this.#values.set(value, tool);
      if (this.#values.size > MAX_TRACKED) {
        const oldest = this.#values.keys().next().value;
        if (oldest !== undefined) this.#values.delete(oldest);
      }
    }
  }

  /** Checks a call's arguments against what untrusted tools returned so far in the run. */
  check(args: unknown): ProvenanceResult {
    if (this.#values.size === 0) return { untrusted: false, sources: [] };
    const strings: string[] = [];
    collectStrings(args, strings);
    const sources = new Set<string>();
    for (const argument of strings) {
      const exact = this.#values.get(argument);
      if (exact !== undefined) {
        sources.add(exact);
        continue;
      }
      for (const [value, tool] of this.#values) {
        if (argument.includes(value) || value.includes(argument)) sources.add(tool);
      }
    }
    return { untrusted: sources.size > 0, sources: [...sources] };
  }
}
