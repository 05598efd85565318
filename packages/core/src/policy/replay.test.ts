import type { LedgerRecord, ToolCall } from '@callgate/protocol';
import { TEST_TOOLS, testEngine } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadPolicy } from './policy.js';
import { replayPolicy } from './replay.js';

const tools = (name: string) => TEST_TOOLS.find((tool) => tool.name === name);

/** The same calls as two engines would see them: the first with `then`, the second with `now`. */
const STRICTER = `
version: 1
default: deny
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: invoices-ask
    match: { tools: [send_invoice] }
    when: args.amount > 100
    effect: ask
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 100
    effect: allow
  - id: no-destructive
    match: { annotations: { destructiveHint: true } }
    when: tool.name == "delete_file"
    effect: deny
`;

async function recorded(calls: ToolCall[], options: { vault: boolean; policy?: string }) {
  const { engine, store, runId } = await testEngine({
    vault: options.vault,
    ...(options.policy ? { policy: options.policy } : {}),
  });
  await engine.decide(runId, calls);
  const records = await store.readRunRecords(runId);
  const commitments = records.flatMap((record) =>
    record.type === 'call-decision' && record.arguments_commitment ? [record.arguments_commitment] : [],
  );
  return { records, openings: await store.getOpenings(commitments), engine };
}

const decisions = (records: readonly LedgerRecord[]) =>
  records.flatMap((record) => (record.type === 'call-decision' ? [record] : []));

describe('replayPolicy', () => {
  const calls: ToolCall[] = [
    { id: 'a', tool: 'read_file', arguments: { path: 'x' } },
    { id: 'b', tool: 'send_invoice', arguments: { to: 'acme', amount: 500, force: true } },
    { id: 'c', tool: 'send_invoice', arguments: { to: 'beta', amount: 5000 } },
    { id: 'd', tool: 'delete_file', arguments: { path: 'y' } },
    { id: 'e', tool: 'no_such_tool', arguments: {} },
  ];

  it('sets the new decision beside the recorded one, with the direction of each change', async () => {
    const { records, openings } = await recorded(calls, { vault: true });
    const report = replayPolicy(records, loadPolicy(STRICTER), { openings, tools });
    const byCall = Object.fromEntries(report.calls.map((call) => [call.call_id, call]));
    expect(byCall.a).toMatchObject({
      change: 'same',
      recorded: { effect: 'allow' },
      replayed: { effect: 'allow' },
    });
    // 500 was a small invoice (allow); the new policy asks above 100. The scrubbed `force` is
    // not in the opening: the replay sees what the gate decided on.
    expect(byCall.b).toMatchObject({
      change: 'stricter',
      recorded: { effect: 'allow', rules: ['small-invoices'] },
      replayed: { effect: 'ask', rules: ['invoices-ask'] },
    });
    expect(byCall.c).toMatchObject({
      change: 'same',
      recorded: { effect: 'ask' },
      replayed: { effect: 'ask' },
    });
    expect(byCall.d).toMatchObject({
      change: 'same',
      recorded: { effect: 'deny' },
      replayed: { effect: 'deny' },
    });
    expect(byCall.e).toMatchObject({ change: 'refused-by-gate', recorded: { error_kind: 'tool-not-found' } });
    expect(report.counts).toEqual({
      same: 3,
      stricter: 1,
      'more-permissive': 0,
      'not-replayable': 0,
      'refused-by-gate': 1,
    });
    const permissive = replayPolicy(records, loadPolicy('version: 1\ndefault: allow\n'), { openings, tools });
    expect(permissive.counts['more-permissive']).toBe(2);
  });

  it('reports calls whose arguments are only committed as not replayable, never guessed', async () => {
    const { records } = await recorded(calls, { vault: false });
    const report = replayPolicy(records, loadPolicy(STRICTER), { openings: [], tools });
    expect(report.counts['not-replayable']).toBe(4);
    for (const call of report.calls) {
      expect(call.replayed).toBeUndefined();
      expect(call.note).toMatch(/only committed|never committed/);
    }
  });

  it('refuses an opening that does not open its commitment', async () => {
    const { records, openings } = await recorded(calls.slice(0, 2), { vault: true });
    const forged = openings.map((opening) => ({ ...opening, value: { path: 'other', to: 'x', amount: 1 } }));
    const report = replayPolicy(records, loadPolicy(STRICTER), { openings: forged, tools });
    expect(report.calls.map((call) => call.change)).toEqual(['not-replayable', 'not-replayable']);
    expect(report.calls[0]?.note).toContain('does not open');
  });

  it('does not guess annotations the ledger does not hold, nor provenance sources', async () => {
    const { records, openings } = await recorded(calls.slice(3, 4), { vault: true });
    const report = replayPolicy(records, loadPolicy(STRICTER), { openings });
    expect(report.calls[0]).toMatchObject({ change: 'not-replayable' });
    expect(report.calls[0]?.note).toContain('no-destructive');
    const sources = loadPolicy(
      'version: 1\nrules:\n  - id: s\n    when: \'"web_fetch" in provenance.sources\'\n    effect: deny\n',
    );
    expect(replayPolicy(records, sources, { openings, tools }).calls[0]?.note).toContain(
      'provenance.sources',
    );
  });

  it('replays a run only with its run-start (principal, labels)', async () => {
    const { records, openings } = await recorded(calls.slice(0, 1), { vault: true });
    const report = replayPolicy(
      records.filter((record) => record.type !== 'run-start'),
      loadPolicy(STRICTER),
      { openings, tools },
    );
    expect(report.calls[0]?.note).toContain('run-start');
  });

  it('gives, for generated calls, exactly what an engine running the new policy decides', async () => {
    const call = fc.oneof(
      fc.record({
        tool: fc.constant('read_file'),
        arguments: fc.record({ path: fc.string({ maxLength: 8 }) }),
      }),
      fc.record({
        tool: fc.constant('send_invoice'),
        arguments: fc.record({
          to: fc.constantFrom('acme', 'beta', 'gamma', 'delta'),
          amount: fc.integer({ min: -10, max: 10_000 }),
        }),
      }),
      fc.record({
        tool: fc.constant('delete_file'),
        arguments: fc.record({ path: fc.string({ maxLength: 8 }) }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 6 }), async (generated) => {
        const steps = generated.map((item, index) => ({ id: `c${index}`, ...item }));
        const before = await recorded(steps, { vault: true });
        const after = await recorded(steps, { vault: true, policy: STRICTER });
        const report = replayPolicy(before.records, loadPolicy(STRICTER), {
          openings: before.openings,
          tools,
        });
        const truth = decisions(after.records);
        report.calls.forEach((replayed, index) => {
          const expected = truth[index];
          if (
            replayed.change === 'refused-by-gate' ||
            (expected?.error_kind !== undefined && expected.error_kind !== 'policy-denied')
          )
            return;
          expect(replayed.replayed?.effect).toBe(expected?.effect);
          expect(replayed.replayed?.rules).toEqual(expected?.rules);
        });
        // Replaying the policy that decided reproduces every policy decision.
        const same = replayPolicy(before.records, before.engine.policy, { openings: before.openings, tools });
        for (const replayed of same.calls) expect(['same', 'refused-by-gate']).toContain(replayed.change);
      }),
      { numRuns: 15 },
    );
  });
});
