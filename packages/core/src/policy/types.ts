// The shapes of the policy module: the normalized policy document (what a policy snapshot
// records and what the digest covers), the input of one evaluation, and the compiled policy.
import type { Decision, Effect, ToolAnnotations, Trust } from '@callgate/protocol';

/** The MCP tool annotation hints a rule may match on (MCP 2025-11-25 `ToolAnnotations`). */
export const ANNOTATION_HINTS = [
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
] as const;
/** One MCP annotation hint name. */
export type AnnotationHint = (typeof ANNOTATION_HINTS)[number];

/**
 * One rule of a normalized policy document. A rule without `match` matches every tool; `when`
 * is a CEL condition over `args`, `call`, `run`, `tool` and `provenance`.
 */
export interface PolicyRuleDocument {
  readonly id: string;
  readonly match?: {
    /** Tool names or globs (`*` matches any run of characters); never empty when present. */
    readonly tools?: readonly string[];
    /** Hint values the tool must have (absent hints take their MCP defaults). */
    readonly annotations?: Readonly<Partial<Record<AnnotationHint, boolean>>>;
  };
  readonly when?: string;
  readonly effect: Effect;
  readonly reason?: string;
}

/**
 * A policy document after validation and normalization: every section present, defaults filled
 * in, durations in milliseconds, lists without duplicates, optional rule fields omitted when
 * absent. It is plain JSON, deeply frozen, and loads again through `compilePolicy` to the same
 * digest. Field names are those of the policy file (DESIGN §4).
 */
export interface PolicyDocument {
  readonly version: 1;
  readonly default: Effect;
  readonly fail_mode: 'closed' | 'open';
  /** `ttl` and `wait` in milliseconds. */
  readonly approval: { readonly ttl: number; readonly wait: number; readonly allow_edits: boolean };
  readonly limits: {
    readonly run: { readonly max_calls?: number };
    readonly tools: Readonly<Record<string, { readonly max_calls?: number }>>;
  };
  readonly scrub: readonly string[];
  readonly trust: { readonly untrusted: readonly string[] };
  readonly profiles: Readonly<Record<string, readonly string[]>>;
  readonly rules: readonly PolicyRuleDocument[];
}

/** Everything a policy may look at when it decides one call. */
export interface PolicyInput {
  tool: { name: string; annotations?: ToolAnnotations; trust?: Trust };
  /** The call's arguments, already parsed and validated (a JSON object). */
  args: Record<string, unknown>;
  call: { id: string; attempt: number; minted: boolean };
  run: { id: string; principal: string; framework: string; labels: Record<string, string> };
  /** Whether any argument value came from an untrusted tool's output, and from which tools. */
  provenance: { untrusted: boolean; sources: string[] };
}

/** Approval settings of a policy; durations in milliseconds. */
export interface ApprovalSettings {
  readonly ttlMs: number;
  readonly waitMs: number;
  readonly allowEdits: boolean;
}

/** Call limits of a policy: per run, and per tool name. */
export interface PolicyLimits {
  readonly run: { readonly maxCalls?: number };
  readonly tools: Readonly<Record<string, { readonly maxCalls?: number }>>;
}

/** A compiled policy: its settings, and `evaluate`, which decides one call. */
export interface Policy {
  /** `sha256:<hex>` of the RFC 8785 canonical JSON of {@link Policy.document}. */
  readonly digest: string;
  /** The normalized document, recorded as the policy snapshot. */
  readonly document: PolicyDocument;
  /** The effect when no rule matches: `deny` unless the file says otherwise. */
  readonly defaultEffect: Effect;
  readonly failMode: 'closed' | 'open';
  /** Defaults: ttl 60 s, wait 5 min, edits not allowed. */
  readonly approval: ApprovalSettings;
  readonly limits: PolicyLimits;
  /** Parameter names that are never model-facing. */
  readonly scrub: readonly string[];
  /** Tool names or globs whose output is untrusted (`trust.untrusted`). */
  readonly untrustedTools: readonly string[];
  /** The user's profiles: name to tool names or globs. */
  readonly profiles: Readonly<Record<string, readonly string[]>>;
  /** True when `tool` matches a name or glob of `trust.untrusted`. */
  isUntrusted(tool: string): boolean;
  /**
   * True when `tool` belongs to `profile`. An unknown profile holds no tool; the built-in `full`
   * profile holds every tool unless the policy defines its own `full`.
   */
  inProfile(profile: string, tool: string): boolean;
  /**
   * Decides one call: every matching rule is folded, deny over ask over allow; with no match
   * the default effect applies. Never throws for a CEL evaluation error (see DESIGN §4).
   */
  evaluate(input: PolicyInput): Decision;
}
