// Which rules can match a tool, found without scanning the policy. Built at load: every tool
// name spelt out in a rule gets its candidate list (in file order) in a Map; rules with globs,
// or with no tool list at all, form a short list that is filtered for any other name, and those
// filtered lists are kept in a small bounded cache.
import type { ToolMatcher } from './glob.js';

/** What the index needs to know of a rule. */
export interface IndexedRule {
  /** Exact tool names the rule lists; undefined when it matches every tool. */
  readonly toolNames: readonly string[] | undefined;
  /** True when the rule lists at least one glob, or no tools at all. */
  readonly wildcard: boolean;
  /** The rule's whole tool match (names and globs). */
  readonly matchesTool: ToolMatcher;
}

const OTHER_NAMES_CACHE_SIZE = 1024;

/** Rules grouped by the tools they can match. */
export class RuleIndex<Rule extends IndexedRule> {
  private readonly byName = new Map<string, readonly Rule[]>();
  private readonly wildcards: readonly Rule[];
  private readonly otherNames = new Map<string, readonly Rule[]>();

  /** Indexes `rules`; candidate lists keep the order of `rules`. */
  constructor(rules: readonly Rule[]) {
    this.wildcards = rules.filter((rule) => rule.wildcard);
    const names = new Set<string>();
    for (const rule of rules) for (const name of rule.toolNames ?? []) names.add(name);
    for (const name of names)
      this.byName.set(
        name,
        rules.filter((rule) => rule.matchesTool(name)),
      );
  }

  /** The rules whose tool match holds for `tool`, in file order. */
  candidates(tool: string): readonly Rule[] {
    const known = this.byName.get(tool) ?? this.otherNames.get(tool);
    if (known) return known;
    const found = this.wildcards.filter((rule) => rule.matchesTool(tool));
    if (this.otherNames.size >= OTHER_NAMES_CACHE_SIZE) this.otherNames.clear();
    this.otherNames.set(tool, found);
    return found;
  }
}
