// Which rules can match a tool, found without scanning the policy. Built at load in time linear
// in the rules: every tool name spelt out in a rule gets the positions of the rules naming it (in
// file order); rules with globs, or with no tool list at all, form a short list that is filtered
// for a name when it is first asked for. A name's candidate list (its rules merged with the
// wildcard rules matching it, in file order) is made on first use and kept: without bound for the
// names the policy spells out, in a small bounded cache for any other name.
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
  private readonly rules: readonly Rule[];
  /** The positions (ascending) of the rules that name each tool. */
  private readonly named = new Map<string, number[]>();
  /** The positions (ascending) of the wildcard rules. */
  private readonly wildcards: readonly number[];
  private readonly namedCandidates = new Map<string, readonly Rule[]>();
  private readonly otherNames = new Map<string, readonly Rule[]>();

  /** Indexes `rules` (time linear in the rules and their names); candidate lists keep the order of `rules`. */
  constructor(rules: readonly Rule[]) {
    this.rules = rules;
    const wildcards: number[] = [];
    rules.forEach((rule, position) => {
      if (rule.wildcard) wildcards.push(position);
      for (const name of rule.toolNames ?? []) {
        const positions = this.named.get(name);
        if (positions === undefined) this.named.set(name, [position]);
        else if (positions.at(-1) !== position) positions.push(position);
      }
    });
    this.wildcards = wildcards;
  }

  /** The rules whose tool match holds for `tool`, in file order. */
  candidates(tool: string): readonly Rule[] {
    const known = this.namedCandidates.get(tool) ?? this.otherNames.get(tool);
    if (known) return known;
    const positions = this.named.get(tool);
    const found = this.merge(positions ?? [], tool);
    if (positions !== undefined) this.namedCandidates.set(tool, found);
    else {
      if (this.otherNames.size >= OTHER_NAMES_CACHE_SIZE) this.otherNames.clear();
      this.otherNames.set(tool, found);
    }
    return found;
  }

  /** The rules at `positions` and the wildcard rules matching `tool`, in file order, each once. */
  private merge(positions: readonly number[], tool: string): Rule[] {
    const found: Rule[] = [];
    let next = 0;
    let last = -1;
    const take = (position: number) => {
      if (position === last) return;
      last = position;
      found.push(this.rules[position] as Rule);
    };
    for (const position of this.wildcards) {
      if (!(this.rules[position] as Rule).matchesTool(tool)) continue;
      while (next < positions.length && (positions[next] as number) <= position)
        take(positions[next++] as number);
      take(position);
    }
    while (next < positions.length) take(positions[next++] as number);
    return found;
  }
}
