// Loading and compiling a policy, and deciding calls with it (DESIGN §3 step 5, §4).
import type { Decision, Effect } from '@callgate/protocol';
import { digestOf } from '../json/canonical.js';
import {
  type Condition,
  type ConditionContext,
  compileCondition,
  conditionContext,
  type EffectiveAnnotations,
  effectiveAnnotations,
} from './conditions.js';
import { normalizeDocument } from './document.js';
import { compileToolPatterns, isGlob, type ToolMatcher } from './glob.js';
import { type PolicySource, policyInvalid, type SourceLocator } from './problems.js';
import { type IndexedRule, RuleIndex } from './rule-index.js';
import type {
  AnnotationHint,
  ApprovalSettings,
  Policy,
  PolicyDocument,
  PolicyInput,
  PolicyLimits,
  PolicyRuleDocument,
} from './types.js';
import { parsePolicyYaml } from './yaml-source.js';

const DEFAULT_SOURCE = 'policy';
/** Fold order: a higher rank wins. */
const RANK: Readonly<Record<Effect, number>> = { allow: 0, ask: 1, deny: 2 };

/**
 * Loads a policy from YAML text (DESIGN §4): parses it, validates every key, compiles each rule's
 * CEL condition once and indexes the rules by tool.
 *
 * @param text the policy file's content, one YAML document.
 * @param options.source what to call the text in messages (a file name); `policy` by default.
 * @returns the compiled {@link Policy}; its `digest` is `sha256:` of the RFC 8785 canonical JSON
 *   of the normalized document, so key order and spelling of defaults do not change it.
 * @throws CallgateError `policy-invalid` when the YAML is malformed, a key is unknown, a value has
 *   the wrong type, a rule id is missing or repeated, `version` is not 1, or a condition does not
 *   compile. The message reads `<source>:<line>:<column>: rule "<id>": <path>: <what>`; details
 *   carry `{ path, rule, line, column }` where known.
 */
export function loadPolicy(text: string, options: { source?: string } = {}): Policy {
  const name = options.source ?? DEFAULT_SOURCE;
  const { value, locator } = parsePolicyYaml(text, name);
  return compileSource(value, { name, locator });
}

/**
 * Compiles an already-parsed policy document (the object form of the YAML file, or a
 * `Policy.document` recorded earlier: that gives back the same digest).
 *
 * @param document the policy as plain data.
 * @param options.source what to call the document in messages; `policy` by default.
 * @param options.locator where the document's values stand in a text it was read from (an
 *   inline policy of callgate.yaml): messages then give line:column, and whole-number and
 *   duration fields are held to their numbers as written (`max_calls: 0x10` is refused).
 * @param options.within where the policy sits in that text (`['policy']`): messages name fields
 *   from the text's root, `FILE:LINE:COLUMN: policy.limits.run.max_calls: …`.
 * @throws CallgateError `policy-invalid` as {@link loadPolicy} does, with the path of the
 *   offending value (line:column only with `options.locator`).
 */
export function compilePolicy(
  document: unknown,
  options: { source?: string; locator?: SourceLocator; within?: readonly (string | number)[] } = {},
): Policy {
  return compileSource(document, {
    name: options.source ?? DEFAULT_SOURCE,
    ...(options.locator ? { locator: options.locator } : {}),
    ...(options.within ? { within: options.within } : {}),
  });
}

function compileSource(value: unknown, source: PolicySource): Policy {
  const document = deepFreeze(normalizeDocument(value, source));
  const rules = document.rules.map((rule, index) => compileRule(rule, index, source));
  return new CompiledPolicy(document, rules);
}

interface CompiledRule extends IndexedRule {
  readonly id: string;
  readonly effect: Effect;
  readonly rank: number;
  readonly reason: string | undefined;
  readonly annotations: readonly (readonly [AnnotationHint, boolean])[] | undefined;
  readonly condition: Condition | undefined;
}

function compileRule(rule: PolicyRuleDocument, index: number, source: PolicySource): CompiledRule {
  let condition: Condition | undefined;
  if (rule.when !== undefined) {
    const compiled = compileCondition(rule.when);
    if ('problem' in compiled) {
      const path = ['rules', index, 'when'];
      throw policyInvalid(source, path, compiled.problem.message, {
        rule: rule.id,
        position: source.locator?.locateInString(path, compiled.problem.offset),
      });
    }
    condition = compiled.condition;
  }
  const tools = rule.match?.tools;
  const hints = rule.match?.annotations;
  return {
    id: rule.id,
    effect: rule.effect,
    rank: RANK[rule.effect],
    reason: rule.reason,
    annotations: hints ? (Object.entries(hints) as [AnnotationHint, boolean][]) : undefined,
    condition,
    toolNames: tools?.filter((tool) => !isGlob(tool)),
    wildcard: tools === undefined || tools.some(isGlob),
    matchesTool: tools === undefined ? () => true : compileToolPatterns(tools),
  };
}

interface Winner {
  readonly rule: CompiledRule;
  /** Set when the condition could not be evaluated and the rule matched failing closed. */
  readonly error?: string;
}

class CompiledPolicy implements Policy {
  readonly digest: string;
  readonly defaultEffect: Effect;
  readonly failMode: 'closed' | 'open';
  readonly approval: ApprovalSettings;
  readonly limits: PolicyLimits;
  readonly scrub: readonly string[];
  readonly untrustedTools: readonly string[];
  readonly profiles: Readonly<Record<string, readonly string[]>>;
  private readonly index: RuleIndex<CompiledRule>;
  private readonly untrusted: ToolMatcher;
  private readonly profileMatchers: ReadonlyMap<string, ToolMatcher>;
  private readonly defaultReason: string;

  constructor(
    readonly document: PolicyDocument,
    rules: readonly CompiledRule[],
  ) {
    this.digest = digestOf(document);
    this.defaultEffect = document.default;
    this.failMode = document.fail_mode;
    this.approval = Object.freeze({
      ttlMs: document.approval.ttl,
      waitMs: document.approval.wait,
      allowEdits: document.approval.allow_edits,
    });
    this.limits = deepFreeze({
      run: maxCalls(document.limits.run),
      tools: Object.fromEntries(
        Object.entries(document.limits.tools).map(([tool, limit]) => [tool, maxCalls(limit)]),
      ),
    });
    this.scrub = document.scrub;
    this.untrustedTools = document.trust.untrusted;
    this.profiles = document.profiles;
    this.index = new RuleIndex(rules);
    this.untrusted = compileToolPatterns(document.trust.untrusted);
    const profiles = new Map<string, ToolMatcher>([['full', () => true]]);
    for (const [name, tools] of Object.entries(document.profiles))
      profiles.set(name, compileToolPatterns(tools));
    this.profileMatchers = profiles;
    this.defaultReason = `no rule matched; the policy default (${document.default}) applies`;
  }

  isUntrusted(tool: string): boolean {
    return this.untrusted(tool);
  }

  inProfile(profile: string, tool: string): boolean {
    return this.profileMatchers.get(profile)?.(tool) ?? false;
  }

  evaluate(input: PolicyInput): Decision {
    let best = -1;
    let winners: Winner[] = [];
    let unapplied: string[] | undefined;
    let annotations: EffectiveAnnotations | undefined;
    let context: ConditionContext | undefined;
    for (const rule of this.index.candidates(input.tool.name)) {
      // A rule below the best effect found so far cannot change the decision.
      if (rule.rank < best) continue;
      if (rule.annotations) {
        annotations ??= effectiveAnnotations(input.tool.annotations);
        if (!matchesAnnotations(rule.annotations, annotations)) continue;
      }
      let error: string | undefined;
      if (rule.condition) {
        context ??= conditionContext(input, this.untrusted(input.tool.name));
        const outcome = rule.condition.evaluate(context);
        if (outcome === false) continue;
        if (outcome !== true) {
          if (rule.effect === 'allow') {
            unapplied ??= [];
            unapplied.push(`rule "${rule.id}" (allow) not applied: its condition failed (${outcome.error})`);
            continue;
          }
          error = outcome.error;
        }
      }
      if (rule.rank > best) {
        best = rule.rank;
        winners = [];
      }
      winners.push(error === undefined ? { rule } : { rule, error });
    }
    const first = winners[0];
    if (first === undefined) {
      const reason = unapplied ? `${this.defaultReason}; ${unapplied.join('; ')}` : this.defaultReason;
      return { effect: this.defaultEffect, rules: [], reason, policy_digest: this.digest };
    }
    // Notes on unapplied allow rules are complete only when no deny or ask rule cut the scan short.
    let reason = winners.map(describeWinner).join('; ');
    if (unapplied && first.rule.effect === 'allow') reason += `; ${unapplied.join('; ')}`;
    return {
      effect: first.rule.effect,
      rules: winners.map((winner) => winner.rule.id),
      reason,
      policy_digest: this.digest,
    };
  }
}

function matchesAnnotations(
  expected: readonly (readonly [AnnotationHint, boolean])[],
  actual: EffectiveAnnotations,
): boolean {
  for (const [hint, value] of expected) if (actual[hint] !== value) return false;
  return true;
}

function describeWinner({ rule, error }: Winner): string {
  const text = rule.reason ?? `matched rule "${rule.id}" (${rule.effect})`;
  if (error === undefined) return text;
  const article = rule.effect === 'deny' ? 'a' : 'an';
  return `${text} [rule "${rule.id}": its condition could not be evaluated (${error}); ${article} ${rule.effect} rule then counts as a match, failing closed]`;
}

function maxCalls(limit: { readonly max_calls?: number }): { maxCalls?: number } {
  return limit.max_calls === undefined ? {} : { maxCalls: limit.max_calls };
}

function deepFreeze<Value>(value: Value): Value {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
