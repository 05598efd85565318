// Validates a parsed policy (DESIGN §4) and normalizes it into a PolicyDocument. Unknown keys are
// refused everywhere: a misspelt key in a security policy must never be silently ignored.
import { EFFECTS, type Effect } from '@callgate/protocol';
import { truncateText } from '../json/text.js';
import { parseDuration } from './duration.js';
import { isGlob, isToolPattern } from './glob.js';
import { closestKey, type Path, type PolicySource, policyInvalid } from './problems.js';
import {
  ANNOTATION_HINTS,
  type AnnotationHint,
  type PolicyDocument,
  type PolicyRuleDocument,
} from './types.js';
import { wholeNumberProblem } from './whole-number.js';

const TOP_KEYS = [
  'version',
  'default',
  'fail_mode',
  'approval',
  'limits',
  'scrub',
  'trust',
  'profiles',
  'rules',
] as const;
const RULE_KEYS = ['id', 'match', 'when', 'effect', 'reason'] as const;
const FAIL_MODES = ['closed', 'open'] as const;
const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9_.:\-/]{0,127}$/;
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const PARAMETER_NAME_MAX = 256;

/** The defaults a policy file may leave out. */
export const POLICY_DEFAULTS = {
  default: 'deny',
  fail_mode: 'closed',
  approval: { ttl: 60_000, wait: 300_000, allow_edits: false },
} as const;

/**
 * Validates `value` (a parsed policy file) and returns its normalized document: every section
 * present, defaults filled in, durations in milliseconds, duplicates dropped from name lists.
 *
 * @throws CallgateError `policy-invalid` naming the source, the path, the rule id when inside a
 *   rule, and the line:column when the source has a locator.
 */
export function normalizeDocument(value: unknown, source: PolicySource): PolicyDocument {
  return new DocumentReader(source).read(value);
}

type PlainObject = Record<string, unknown>;

class DocumentReader {
  constructor(private readonly source: PolicySource) {}

  read(value: unknown): PolicyDocument {
    if (!isPlainObject(value)) {
      this.fail([], `a policy is a mapping that starts with \`version: 1\` (got ${describe(value)})`);
    }
    const root = this.keys(value, [], TOP_KEYS);
    if (!('version' in root)) this.fail([], 'the policy has no `version`; write `version: 1` first');
    if (root.version !== 1) {
      this.fail(
        ['version'],
        `unsupported policy version ${describe(root.version)}; this callgate reads version 1`,
      );
    }
    return {
      version: 1,
      default: 'default' in root ? this.effect(root.default, ['default']) : POLICY_DEFAULTS.default,
      fail_mode: 'fail_mode' in root ? this.failMode(root.fail_mode) : POLICY_DEFAULTS.fail_mode,
      approval: this.approval(root.approval),
      limits: this.limits(root.limits),
      scrub: 'scrub' in root ? this.parameterNames(root.scrub, ['scrub']) : [],
      trust: this.trust(root.trust),
      profiles: this.profiles(root.profiles),
      rules: 'rules' in root ? this.rules(root.rules) : [],
    };
  }

  private fail(path: Path, message: string, place: { rule?: string; at?: 'key' } = {}): never {
    throw policyInvalid(this.source, path, message, place);
  }

  /**
   * A number as its YAML source wrote it (`0x10` where the reader gave 16), so that a whole-number
   * or duration field is held to decimal digits; `String(value)` without a source text.
   */
  private written(value: unknown, path: Path): string | undefined {
    if (typeof value !== 'number') return undefined;
    return this.source.locator?.numberSource?.(path) ?? String(value);
  }

  /** `value` as a mapping. */
  private mapping(value: unknown, path: Path, rule?: string): PlainObject {
    if (!isPlainObject(value)) this.fail(path, `expected a mapping (got ${describe(value)})`, { rule });
    return value;
  }

  /** `value` as a mapping whose keys are all in `allowed`. */
  private keys(value: unknown, path: Path, allowed: readonly string[], rule?: string): PlainObject {
    this.mapping(value, path, rule);
    for (const key of Object.keys(value as PlainObject)) {
      if (allowed.includes(key)) continue;
      const suggestion = closestKey(key, allowed);
      const hint = suggestion ? `did you mean "${suggestion}"? ` : '';
      this.fail(
        [...path, key],
        `unknown key ${JSON.stringify(key)} (${hint}allowed: ${allowed.join(', ')})`,
        {
          rule,
          at: 'key',
        },
      );
    }
    return value as PlainObject;
  }

  private effect(value: unknown, path: Path, rule?: string): Effect {
    if (typeof value === 'string' && (EFFECTS as readonly string[]).includes(value)) return value as Effect;
    this.fail(path, `expected one of ${EFFECTS.join(', ')} (got ${describe(value)})`, { rule });
  }

  private failMode(value: unknown): 'closed' | 'open' {
    if (value === 'closed' || value === 'open') return value;
    this.fail(['fail_mode'], `expected one of ${FAIL_MODES.join(', ')} (got ${describe(value)})`);
  }

  private approval(value: unknown): PolicyDocument['approval'] {
    const defaults = POLICY_DEFAULTS.approval;
    if (value === undefined) return { ...defaults };
    const approval = this.keys(value, ['approval'], ['ttl', 'wait', 'allow_edits']);
    let allowEdits: boolean = defaults.allow_edits;
    if ('allow_edits' in approval) {
      if (typeof approval.allow_edits !== 'boolean') {
        this.fail(
          ['approval', 'allow_edits'],
          `expected true or false (got ${describe(approval.allow_edits)})`,
        );
      }
      allowEdits = approval.allow_edits;
    }
    return {
      ttl: 'ttl' in approval ? this.duration(approval.ttl, ['approval', 'ttl']) : defaults.ttl,
      wait: 'wait' in approval ? this.duration(approval.wait, ['approval', 'wait']) : defaults.wait,
      allow_edits: allowEdits,
    };
  }

  private duration(value: unknown, path: Path): number {
    const parsed = parseDuration(value, this.written(value, path));
    if ('problem' in parsed) this.fail(path, parsed.problem);
    return parsed.ms;
  }

  private limits(value: unknown): PolicyDocument['limits'] {
    if (value === undefined) return { run: {}, tools: {} };
    const limits = this.keys(value, ['limits'], ['run', 'tools']);
    const run = 'run' in limits ? this.callLimit(limits.run, ['limits', 'run']) : {};
    const tools: [string, { max_calls?: number }][] = [];
    if ('tools' in limits) {
      const byTool = this.mapping(limits.tools, ['limits', 'tools']);
      for (const [tool, limit] of Object.entries(byTool)) {
        if (!isToolPattern(tool) || isGlob(tool)) {
          this.fail(['limits', 'tools', tool], 'a limit names one tool (letters, digits, _ . - /; no *)', {
            at: 'key',
          });
        }
        tools.push([tool, this.callLimit(limit, ['limits', 'tools', tool])]);
      }
    }
    return { run, tools: Object.fromEntries(tools) };
  }

  private callLimit(value: unknown, path: Path): { max_calls?: number } {
    const limit = this.keys(value, path, ['max_calls']);
    if (!('max_calls' in limit)) return {};
    const maxCalls = limit.max_calls;
    const problem = wholeNumberProblem(
      maxCalls,
      { minimum: 0 },
      this.written(maxCalls, [...path, 'max_calls']) ?? describe(maxCalls),
    );
    if (problem !== undefined) this.fail([...path, 'max_calls'], `a number of calls: ${problem}`);
    return { max_calls: maxCalls as number };
  }

  private trust(value: unknown): PolicyDocument['trust'] {
    if (value === undefined) return { untrusted: [] };
    const trust = this.keys(value, ['trust'], ['untrusted']);
    return {
      untrusted: 'untrusted' in trust ? this.toolPatterns(trust.untrusted, ['trust', 'untrusted']) : [],
    };
  }

  private profiles(value: unknown): PolicyDocument['profiles'] {
    if (value === undefined) return {};
    const profiles = this.mapping(value, ['profiles']);
    const entries: [string, readonly string[]][] = [];
    for (const [name, tools] of Object.entries(profiles)) {
      if (!PROFILE_NAME.test(name)) {
        this.fail(['profiles', name], 'a profile name uses letters, digits, _ and - (at most 64)', {
          at: 'key',
        });
      }
      entries.push([name, this.toolPatterns(tools, ['profiles', name])]);
    }
    return Object.fromEntries(entries);
  }

  private rules(value: unknown): PolicyRuleDocument[] {
    if (!Array.isArray(value)) this.fail(['rules'], `expected a list of rules (got ${describe(value)})`);
    const seen = new Map<string, number>();
    return value.map((item, index) => {
      const rule = this.rule(item, ['rules', index]);
      const first = seen.get(rule.id);
      if (first !== undefined) {
        const place = this.source.locator?.locate(['rules', first, 'id'], 'value');
        const where = place ? ` at line ${place.line}` : '';
        this.fail(['rules', index, 'id'], `duplicate rule id; rules[${first}]${where} already uses it`, {
          rule: rule.id,
        });
      }
      seen.set(rule.id, index);
      return rule;
    });
  }

  private rule(value: unknown, path: Path): PolicyRuleDocument {
    if (!isPlainObject(value))
      this.fail(path, `expected a rule mapping with id and effect (got ${describe(value)})`);
    const id = value.id;
    if (id === undefined) this.fail(path, 'a rule needs an `id`');
    if (typeof id !== 'string' || !RULE_ID.test(id)) {
      this.fail(
        [...path, 'id'],
        `a rule id uses letters, digits, _ . : - / (at most 128; got ${describe(id)})`,
      );
    }
    const rule = this.keys(value, path, RULE_KEYS, id);
    if (!('effect' in rule)) this.fail(path, 'a rule needs an `effect` (allow, deny or ask)', { rule: id });
    const effect = this.effect(rule.effect, [...path, 'effect'], id);
    const match = 'match' in rule ? this.match(rule.match, [...path, 'match'], id) : undefined;
    const when = 'when' in rule ? this.text(rule.when, [...path, 'when'], id, 'a CEL condition') : undefined;
    const reason = 'reason' in rule ? this.text(rule.reason, [...path, 'reason'], id, 'a reason') : undefined;
    return {
      id,
      ...(match ? { match } : {}),
      ...(when !== undefined ? { when } : {}),
      effect,
      ...(reason !== undefined ? { reason } : {}),
    };
  }

  private match(value: unknown, path: Path, rule: string): PolicyRuleDocument['match'] {
    const match = this.keys(value, path, ['tools', 'annotations'], rule);
    const tools = 'tools' in match ? this.toolPatterns(match.tools, [...path, 'tools'], rule) : undefined;
    if (tools?.length === 0) {
      this.fail([...path, 'tools'], 'an empty list matches no tool; list tools or leave `tools` out', {
        rule,
      });
    }
    let annotations: Partial<Record<AnnotationHint, boolean>> | undefined;
    if ('annotations' in match) {
      const hints = this.keys(match.annotations, [...path, 'annotations'], ANNOTATION_HINTS, rule);
      annotations = {};
      for (const hint of ANNOTATION_HINTS) {
        if (!(hint in hints)) continue;
        const expected = hints[hint];
        if (typeof expected !== 'boolean') {
          this.fail([...path, 'annotations', hint], `expected true or false (got ${describe(expected)})`, {
            rule,
          });
        }
        annotations[hint] = expected;
      }
    }
    const hasAnnotations = annotations !== undefined && Object.keys(annotations).length > 0;
    if (!tools && !hasAnnotations) return undefined;
    return { ...(tools ? { tools } : {}), ...(hasAnnotations ? { annotations } : {}) };
  }

  private text(value: unknown, path: Path, rule: string, what: string): string {
    if (typeof value !== 'string' || value.trim() === '') {
      this.fail(path, `expected ${what} as a non-empty string (got ${describe(value)})`, { rule });
    }
    return value;
  }

  private toolPatterns(value: unknown, path: Path, rule?: string): string[] {
    return this.names(value, path, rule, (name) =>
      isToolPattern(name)
        ? undefined
        : 'a tool name or glob uses letters, digits, _ . - / and * (at most 128)',
    );
  }

  private parameterNames(value: unknown, path: Path): string[] {
    return this.names(value, path, undefined, (name) =>
      name.length > 0 && name.length <= PARAMETER_NAME_MAX
        ? undefined
        : 'a parameter name is 1 to 256 characters',
    );
  }

  /** A list of strings, each accepted by `check`, without duplicates, in first-seen order. */
  private names(
    value: unknown,
    path: Path,
    rule: string | undefined,
    check: (name: string) => string | undefined,
  ): string[] {
    if (!Array.isArray(value)) this.fail(path, `expected a list (got ${describe(value)})`, { rule });
    const names = new Set<string>();
    value.forEach((item, index) => {
      const problem = typeof item === 'string' ? check(item) : 'expected a string';
      if (problem !== undefined) this.fail([...path, index], `${problem} (got ${describe(item)})`, { rule });
      names.add(item);
    });
    return [...names];
  }
}

function isPlainObject(value: unknown): value is PlainObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A short rendering of a value for messages. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object')
    return isPlainObject(value) ? 'a mapping' : (value.constructor?.name ?? 'an object');
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 60 ? truncateText(text, 57, '...') : text;
}
