// Checks one scenario's real outcome against the table: which tools ran, what the model read as
// each call's result, and the ledger's records (which must also verify offline).
import type { LedgerRecord } from '@callgate/protocol';
import { ERROR_KINDS } from '@callgate/protocol';
import { expect } from 'vitest';
import {
  type Adapter,
  type ExpectedCall,
  expectedCalls,
  IN_APP_REVIEWER,
  type ModelSaw,
  type Scenario,
  type ScriptedCall,
} from './scenarios.js';
import type { ConformanceWorld } from './world.js';

/** The scripted calls of a scenario in table order: the outer turns, then the subagent's. */
export function scriptedCalls(scenario: Scenario): ScriptedCall[] {
  const calls = (turns: Scenario['turns']) => turns.flatMap((turn) => ('calls' in turn ? turn.calls : []));
  return [...calls(scenario.turns), ...calls(scenario.subagent ?? [])];
}

const KINDS = new Set<string>(ERROR_KINDS);

/**
 * What a model read, classified: a callgate refusal's kind (`{"error": {"kind"}}` as an object
 * or JSON text, possibly inside a framework's wrapper), the framework's own error, or a result.
 */
export function classify(value: unknown, frameworkError = false): ModelSaw {
  let current = value;
  if (typeof current === 'string') {
    try {
      current = JSON.parse(current);
    } catch {
      return frameworkError ? 'framework-error' : 'result';
    }
  }
  const kind = (current as { error?: { kind?: unknown } } | null)?.error?.kind;
  if (typeof kind === 'string' && KINDS.has(kind)) return kind as ModelSaw;
  return frameworkError ? 'framework-error' : 'result';
}

/** What a harness observed of a scenario's run. */
export interface Observation {
  /** The callgate run the scenario used. */
  runId: string;
  /** What the model read as each scripted call's result, in {@link scriptedCalls} order. */
  saw: ModelSaw[];
}

function recordsOf<T extends LedgerRecord['type']>(records: LedgerRecord[], type: T) {
  return records.filter((record) => record.type === type) as Extract<LedgerRecord, { type: T }>[];
}

/**
 * Asserts the scenario's outcome for `adapter`: one decision per scripted call, matched by the
 * model's call id and attempt (minted ids in order); each decision, approval and outcome as the
 * table says; each tool run exactly as often as the table says; and what the model read.
 */
export async function checkScenario(
  adapter: Adapter,
  scenario: Scenario,
  world: ConformanceWorld,
  observed: Observation,
) {
  const expected = expectedCalls(scenario, adapter);
  const scripted = scriptedCalls(scenario);
  // The runs of agents used as tools, where a framework gives them their own (child) run.
  const children = (await world.store.listRuns({ limit: 1000 }))
    .filter((run) => run.parent_run_id === observed.runId)
    .map((run) => run.run_id);
  const records = [
    ...(await world.records(observed.runId)),
    ...(await Promise.all(children.map((runId) => world.records(runId)))).flat(),
  ];
  const decisions = recordsOf(records, 'call-decision');
  expect(
    decisions.map((record) => record.tool),
    'one call-decision per scripted call',
  ).toEqual(expect.arrayContaining(expected.map((call) => call.tool)));
  expect(decisions).toHaveLength(expected.length);

  const used = new Set<LedgerRecord>();
  const seen = new Map<string, number>();
  expected.forEach((want: ExpectedCall, index) => {
    const call = scripted[index] as ScriptedCall;
    const given = call.id ? call.id : undefined;
    // A call whose id the framework could not keep (a repeat within its step) is minted.
    const kept = given && !want.minted ? given : undefined;
    const nth = kept ? (seen.get(kept) ?? 0) + 1 : 0;
    if (kept) seen.set(kept, nth);
    const decision = decisions.find(
      (record) =>
        !used.has(record) &&
        (kept
          ? record.call_id === kept && record.attempt === nth
          : record.minted && record.tool === call.tool),
    );
    const where = `${scenario.id} call ${index} (${call.tool} ${JSON.stringify(call.id)})`;
    expect(decision, `${where}: its call-decision`).toBeDefined();
    if (!decision) return;
    used.add(decision);
    expect(
      {
        tool: decision.tool,
        effect: decision.effect,
        error_kind: decision.error_kind,
        minted: decision.minted,
        attempt: decision.attempt,
      },
      `${where}: call-decision`,
    ).toEqual({
      tool: want.tool,
      effect: want.decision,
      error_kind: want.errorKind,
      minted: want.minted ?? false,
      attempt: want.attempt ?? 1,
    });
    if (decision.minted) expect(decision.call_id).toMatch(/^cg-[0-9a-f]{16}$/);
    const approval = recordsOf(records, 'approval-response').find(
      (record) => record.call_id === decision.call_id,
    );
    expect(approval?.status, `${where}: approval-response`).toBe(want.approval);
    if (scenario.reviewer === 'in-app' && approval) {
      expect(approval.reviewer, `${where}: the in-app reviewer answered`).toBe(IN_APP_REVIEWER);
    }
    const ends = recordsOf(records, 'call-end').filter(
      (record) => record.call_id === decision.call_id && record.attempt === decision.attempt,
    );
    expect(ends, `${where}: exactly one call-end`).toHaveLength(1);
    const endKind =
      want.outcome === 'ok' ? undefined : KINDS.has(want.modelSaw) ? want.modelSaw : want.errorKind;
    expect({ outcome: ends[0]?.outcome, error_kind: ends[0]?.error_kind }, `${where}: call-end`).toEqual({
      outcome: want.outcome,
      error_kind: endKind,
    });
    expect(ends[0]?.grant_consumed, `${where}: grant consumed`).toBe(want.ran);
    expect(observed.saw[index], `${where}: what the model read`).toBe(want.modelSaw);
  });

  const ranTools = world.executions.map((execution) => execution.tool).sort();
  const wantTools = expected
    .filter((call) => call.ran && call.tool !== 'researcher')
    .map((call) => call.tool)
    .sort();
  expect(ranTools, `${scenario.id}: the tools that ran`).toEqual(wantTools);
  expect(recordsOf(records, 'run-end'), `${scenario.id}: one run-end per run`).toHaveLength(
    1 + children.length,
  );
}
