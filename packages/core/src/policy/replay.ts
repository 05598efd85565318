// Replaying a policy over recorded calls: what a new policy would have decided for every past
// call, beside what the gate decided then. Only what the ledger (and its openings) holds is used;
// a call whose decision would need something it does not hold is reported as not replayable,
// never guessed.
import type {
  Decision,
  Effect,
  LedgerRecord,
  LedgerRecordOf,
  Opening,
  ToolAnnotations,
  Trust,
} from '@callgate/protocol';
import { opens } from '../json/canonical.js';
import { compileToolPatterns } from './glob.js';
import type { Policy } from './types.js';

/** How a replayed decision compares with the recorded one. */
export type ReplayChange = 'same' | 'stricter' | 'more-permissive' | 'not-replayable' | 'refused-by-gate';

/** The replay of one `call-decision` record. */
export interface ReplayedCall {
  run_id: string;
  /** The decision record's leaf index in the log. */
  seq: number;
  call_id: string;
  attempt: number;
  tool: string;
  /** What the gate decided then (the record's effect, rules and policy digest). */
  recorded: { effect: Effect; rules: string[]; policy_digest: string; error_kind?: string };
  /** What the new policy decides. Absent when the call is not replayable. */
  replayed?: { effect: Effect; rules: string[]; reason: string };
  change: ReplayChange;
  /** Why a call is `not-replayable` or `refused-by-gate`, or what changed besides the effect. */
  note?: string;
}

/** The whole replay: every call in record order, and counts per {@link ReplayChange}. */
export interface ReplayReport {
  policy_digest: string;
  calls: ReplayedCall[];
  counts: Record<ReplayChange, number>;
}

/** What the replay may know of a tool beyond the ledger (the registry's spec). */
export interface ReplayTool {
  annotations?: ToolAnnotations;
  trust?: Trust;
}

/** Options of {@link replayPolicy}. */
export interface ReplayOptions {
  /** Openings of the records' commitments (the vault's, or a bundle's `openings`). */
  openings: Iterable<Opening>;
  /**
   * The tool specs of the registry, by name. The ledger does not record a tool's annotations:
   * a call to a tool absent here is replayable only when no rule that could match it looks at
   * annotations or at `tool` in its condition.
   */
  tools?: (name: string) => ReplayTool | undefined;
}

const RANK: Readonly<Record<Effect, number>> = { allow: 0, ask: 1, deny: 2 };
const CHANGES: readonly ReplayChange[] = [
  'same',
  'stricter',
  'more-permissive',
  'not-replayable',
  'refused-by-gate',
];

/**
 * Decides every recorded call again under `policy` (DESIGN §3 step 5 only: the gate's other
 * steps ran then and are not re-run) and compares with the recorded decision.
 *
 * - A call's arguments are taken from the opening of its `arguments_commitment` (the validated,
 *   scrubbed arguments the gate decided on); without an opening that opens it, the call is
 *   `not-replayable`.
 * - The run's principal, framework and labels come from its `run-start` record; a run whose
 *   `run-start` is not among `records` is `not-replayable`.
 * - `provenance.untrusted` comes from the record; provenance sources are not recorded, so a
 *   condition that names `provenance.sources` makes the call `not-replayable`.
 * - A call the gate refused for another reason than the policy (`tool-not-found`, invalid
 *   arguments, a guardrail, a limit, idempotency) is `refused-by-gate`: the new policy's decision
 *   is shown when it can be computed, but it is not counted as a change.
 *
 * @param records ledger records of one or more runs, in log order (a bundle's, or a store's).
 * @returns one {@link ReplayedCall} per `call-decision` record, in order, with counts.
 */
export function replayPolicy(
  records: readonly LedgerRecord[],
  policy: Policy,
  options: ReplayOptions,
): ReplayReport {
  const openings = new Map<string, Opening>();
  for (const opening of options.openings) openings.set(opening.commitment, opening);
  const runs = new Map<string, LedgerRecordOf<'run-start'>>();
  const needs = new NeedsOfTool(policy);
  const calls: ReplayedCall[] = [];
  for (const record of records) {
    if (record.type === 'run-start') runs.set(record.run_id, record);
    if (record.type !== 'call-decision') continue;
    calls.push(replayOne(record, runs.get(record.run_id), policy, openings, needs, options.tools));
  }
  const counts = Object.fromEntries(CHANGES.map((change) => [change, 0])) as Record<ReplayChange, number>;
  for (const call of calls) counts[call.change] += 1;
  return { policy_digest: policy.digest, calls, counts };
}

function replayOne(
  record: LedgerRecordOf<'call-decision'>,
  run: LedgerRecordOf<'run-start'> | undefined,
  policy: Policy,
  openings: ReadonlyMap<string, Opening>,
  needs: NeedsOfTool,
  tools: ReplayOptions['tools'],
): ReplayedCall {
  const refusedByGate = record.error_kind !== undefined && record.error_kind !== 'policy-denied';
  const base: ReplayedCall = {
    run_id: record.run_id,
    seq: record.seq,
    call_id: record.call_id,
    attempt: record.attempt,
    tool: record.tool,
    recorded: {
      effect: record.effect,
      rules: [...record.rules],
      policy_digest: record.policy_digest,
      ...(record.error_kind !== undefined ? { error_kind: record.error_kind } : {}),
    },
    change: 'not-replayable',
  };
  const gateNote = `the gate refused it (${record.error_kind}), not the policy`;
  const unreplayable = (why: string): ReplayedCall =>
    refusedByGate
      ? { ...base, change: 'refused-by-gate', note: `${gateNote}; ${why}` }
      : { ...base, note: why };

  if (!run) return unreplayable('its run-start record is not among the records replayed');
  if (record.arguments_commitment === null) return unreplayable('its arguments were never committed');
  const opening = openings.get(record.arguments_commitment);
  if (!opening) return unreplayable('its arguments are only committed: no opening in the vault or bundle');
  if (!opens(opening.commitment, opening.salt, opening.value))
    return unreplayable('the opening of its arguments does not open their commitment');
  if (typeof opening.value !== 'object' || opening.value === null || Array.isArray(opening.value))
    return unreplayable('its opened arguments are not a JSON object');
  const spec = tools?.(record.tool);
  const need = needs.of(record.tool);
  if (need.sources) return unreplayable('a rule reads provenance.sources, which the ledger does not record');
  if (need.tool && !spec)
    return unreplayable(
      `a rule looks at the tool's annotations, which the ledger does not record (${need.tool})`,
    );

  const decision: Decision = policy.evaluate({
    tool: {
      name: record.tool,
      ...(spec?.annotations ? { annotations: spec.annotations } : {}),
      trust: spec?.trust ?? (policy.isUntrusted(record.tool) ? 'untrusted' : 'trusted'),
    },
    args: opening.value as Record<string, unknown>,
    call: { id: record.call_id, attempt: record.attempt, minted: record.minted },
    run: { id: run.run_id, principal: run.principal, framework: run.framework, labels: run.labels },
    provenance: { untrusted: record.provenance_untrusted === true, sources: [] },
  });
  const replayed = { effect: decision.effect, rules: [...decision.rules], reason: decision.reason };
  if (refusedByGate) return { ...base, replayed, change: 'refused-by-gate', note: gateNote };
  const delta = RANK[decision.effect] - RANK[record.effect];
  const change: ReplayChange = delta > 0 ? 'stricter' : delta < 0 ? 'more-permissive' : 'same';
  const sameRules = decision.rules.join('\n') === record.rules.join('\n');
  return {
    ...base,
    replayed,
    change,
    ...(change === 'same' && !sameRules ? { note: 'same effect, other rules' } : {}),
  };
}

/** Which facts the ledger does not hold a policy's rules would read for a tool. */
class NeedsOfTool {
  readonly #rules: { matches: (tool: string) => boolean; tool?: string; sources: boolean }[];
  readonly #cache = new Map<string, { tool?: string; sources: boolean }>();

  constructor(policy: Policy) {
    this.#rules = policy.document.rules.map((rule) => {
      const tools = rule.match?.tools;
      const readsTool = rule.match?.annotations
        ? `rule "${rule.id}" matches annotations`
        : rule.when !== undefined && /\btool\b/.test(rule.when)
          ? `rule "${rule.id}" reads tool in its condition`
          : undefined;
      return {
        matches: tools === undefined ? () => true : compileToolPatterns(tools),
        ...(readsTool ? { tool: readsTool } : {}),
        sources: rule.when !== undefined && /\bprovenance\s*\.\s*sources\b/.test(rule.when),
      };
    });
  }

  of(tool: string): { tool?: string; sources: boolean } {
    let found = this.#cache.get(tool);
    if (!found) {
      const matching = this.#rules.filter((rule) => rule.matches(tool));
      const readsTool = matching.find((rule) => rule.tool)?.tool;
      found = { ...(readsTool ? { tool: readsTool } : {}), sources: matching.some((rule) => rule.sources) };
      this.#cache.set(tool, found);
    }
    return found;
  }
}
