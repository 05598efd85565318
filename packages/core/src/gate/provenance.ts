/** Shortest string from an untrusted tool's output that provenance tracks. */
export const PROVENANCE_MIN_LENGTH = 8;
/** A string at least this long counts when found inside another, whatever it holds. */
export const PROVENANCE_SUBSTRING_MIN_LENGTH = 24;
/** Longest untrusted string scanned for distinctive tokens (longer ones are scanned up to it). */
const MAX_SCANNED = 64 * 1024;

/**
 * True when `text` is distinctive enough to count when found inside a longer string (or a longer
 * string inside it): 24 characters or more, or a single token (no whitespace) that holds
 * something besides letters — an address, a URL, a number, an identifier. Common words and short
 * phrases from a long page do not count.
 */
export function distinctive(text: string): boolean {
  if (text.length >= PROVENANCE_SUBSTRING_MIN_LENGTH) return true;
  return text.length >= PROVENANCE_MIN_LENGTH && !/\s/.test(text) && /[^\p{L}]/u.test(text);
}

/** Distinctive tokens inside a longer untrusted string: addresses, URLs, numbers, identifiers. */
function tokensOf(text: string, into: string[]): void {
  for (const token of text.slice(0, MAX_SCANNED).split(/[\s<>()[\]{}"',;]+/u)) {
    const trimmed = token.replace(/[.:!?]+$/u, '');
    if (trimmed !== text && distinctive(trimmed) && trimmed.length < PROVENANCE_SUBSTRING_MIN_LENGTH * 4)
      into.push(trimmed);
  }
}
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
 * returned, and the distinctive tokens inside longer ones (see {@link distinctive}), and tells
 * whether a later call's arguments repeat one: an argument equal to such a value, one that
 * contains a distinctive value (an address inside an email body), or a distinctive argument found
 * inside one (a value copied out of a page).
 */
export class ProvenanceTracker {
  readonly #values = new Map<string, string>(); // value -> tool

  /** Remembers the strings in an untrusted tool's result. */
  observe(tool: string, result: unknown): void {
    const strings: string[] = [];
    collectStrings(result, strings);
    for (const text of [...strings]) if (/\s/.test(text)) tokensOf(text, strings);
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
      const argumentDistinctive = distinctive(argument);
      for (const [value, tool] of this.#values) {
        if (sources.has(tool)) continue;
        if (
          (argumentDistinctive && value.includes(argument)) ||
          (argument.length > value.length && distinctive(value) && argument.includes(value))
        )
          sources.add(tool);
      }
    }
    return { untrusted: sources.size > 0, sources: [...sources] };
  }
}
