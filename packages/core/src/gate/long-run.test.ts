// One long run (as a gateway session is) with many calls, retries, refused and ended calls, and
// restarts that reload the run from the store (DESIGN §8, invariants 1–2): the engine holds in
// memory only the calls that have not ended, whatever the run's length, and that changes none of
// its decisions or records. Generated: each sequence of steps is played twice on fresh stores, once
// with its restarts and once without, and the two must decide and record the same; after every
// step the rows held equal the attempts a model of the run counts open, and after the run every
// decided attempt has exactly one `call-end` and the bundle verifies strictly.
import { isCallgateError, type LedgerRecord, type Outcome } from '@callgate/protocol';
import { TEST_TOOLS } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../crypto.js';
import { Ledger } from '../ledger/ledger.js';
import { logSignerFromPrivateKey } from '../ledger/signed-note.js';
import { verifyBundle } from '../ledger/verify/verify-bundle.js';
import { loadPolicy } from '../policy/policy.js';
import { MemoryStore } from '../store/memory-store.js';
import { Engine } from './engine.js';

const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 5s, allow_edits: false }
limits: { run: { max_calls: 25 }, tools: { send_invoice: { max_calls: 8 } } }
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
`;

const KINDS = ['read', 'small', 'large', 'delete', 'invalid'] as const;
const OUTCOMES: readonly Outcome[] = ['ok', 'error', 'denied', 'decided-not-completed'];

type Step =
  | { type: 'decide'; calls: { id: string | null; kind: (typeof KINDS)[number]; to: string }[] }
  | { type: 'report'; pick: number; latest: boolean; outcome: Outcome }
  | { type: 'restart' };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant('decide' as const),
      calls: fc.array(
        fc.record({
          // A few given ids (retried: their next attempts), or none (minted, as the gateway's).
          id: fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { nil: null }),
          kind: fc.constantFrom(...KINDS),
          to: fc.constantFrom('acme', 'globex'),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant('report' as const),
      pick: fc.nat(),
      latest: fc.boolean(),
      outcome: fc.constantFrom(...OUTCOMES),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'restart' as const }) },
);

const argumentsOf = (kind: (typeof KINDS)[number], to: string) => {
  switch (kind) {
    case 'read':
      return { tool: 'read_file', arguments: { path: to } };
    case 'small':
      return { tool: 'send_invoice', arguments: { to, amount: 10 } };
    case 'large':
      return { tool: 'send_invoice', arguments: { to, amount: 5000 } };
    case 'delete':
      return { tool: 'delete_file', arguments: { path: to } };
    case 'invalid':
      return { tool: 'read_file', arguments: { path: 7 } };
  }
};

/** Plays `steps` on a fresh store (restarting the engine at each `restart` when `restarts`). */
async function play(steps: readonly Step[], restarts: boolean) {
  const store = new MemoryStore();
  const origin = 'test.local/long-run';
  const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
  const policy = loadPolicy(POLICY, { source: 'long-run.yaml' });
  const open = async () =>
    new Engine({ store, ledger: await Ledger.open(store, { signer, origin }), policy, tools: TEST_TOOLS });
  let engine = await open();
  const runId = (await engine.startRun({ principal: 'tester', framework: 'vitest' })).run_id;
  // Minted call ids in order of appearance, so the two plays compare.
  const minted = new Map<string, string>();
  const name = (callId: string) => minted.get(callId) ?? callId;
  const decided: { call_id: string; attempt: number }[] = [];
  const openAttempts = new Set<string>();
  const seen: unknown[] = [];
  const held: number[] = [];
  for (const step of steps) {
    if (step.type === 'restart') {
      if (!restarts) continue;
      await engine.close();
      engine = await open();
      expect(engine.heldCalls(runId)).toBeUndefined(); // nothing until the run is touched
      continue;
    }
    if (step.type === 'decide') {
      const verdicts = await engine.decide(
        runId,
        step.calls.map((call) => ({ id: call.id, ...argumentsOf(call.kind, call.to) })),
      );
      for (const verdict of verdicts) {
        if (verdict.minted) minted.set(verdict.call_id, `minted-${minted.size}`);
        decided.push({ call_id: verdict.call_id, attempt: verdict.attempt });
        openAttempts.add(`${verdict.call_id}/${verdict.attempt}`);
        seen.push({
          call: name(verdict.call_id),
          attempt: verdict.attempt,
          status: verdict.status,
          error: verdict.error?.kind,
        });
      }
    } else if (decided.length > 0) {
      const target = decided[step.pick % decided.length] as { call_id: string; attempt: number };
      try {
        const outcome = await engine.recordOutcome(runId, {
          call_id: target.call_id,
          ...(step.latest ? {} : { attempt: target.attempt }),
          outcome: step.outcome,
        });
        const attempt = step.latest
          ? Math.max(...decided.filter((item) => item.call_id === target.call_id).map((item) => item.attempt))
          : target.attempt;
        openAttempts.delete(`${target.call_id}/${attempt}`);
        seen.push({ report: name(target.call_id), outcome });
      } catch (error) {
        if (!isCallgateError(error)) throw error;
        seen.push({ report: name(target.call_id), error: error.kind });
      }
    }
    // Held in memory: exactly the attempts not ended; one number per call id besides.
    // (Nothing is held after a restart until the run is touched again.)
    const memory = engine.heldCalls(runId);
    if (memory === undefined) continue;
    expect(memory.rows).toBe(openAttempts.size);
    expect(memory.callIds).toBe(new Set(decided.map((item) => item.call_id)).size);
    expect(memory.keys).toBeLessThanOrEqual(openAttempts.size);
    held.push(memory.rows);
  }
  await engine.endRun(runId);
  expect(engine.heldCalls(runId)).toBeUndefined();
  const bundle = await engine.exportRun(runId);
  await engine.close();
  const records = bundle.records as LedgerRecord[];
  expect(verifyBundle(bundle, { strict: true }).failures).toEqual([]);
  const ends = new Map<string, number>();
  for (const record of records) {
    if (record.type !== 'call-end') continue;
    const key = `${record.call_id}/${record.attempt}`;
    ends.set(key, (ends.get(key) ?? 0) + 1);
  }
  for (const item of decided) expect(ends.get(`${item.call_id}/${item.attempt}`)).toBe(1);
  expect(ends.size).toBe(decided.length);
  // What the two plays must share: each record's kind and meaning, without run, time, chain,
  // keyed digests or salted commitments (different on each store), minted ids by order.
  const described = records.map((record) => {
    const fields = record as unknown as Record<string, unknown>;
    const kept: Record<string, unknown> = { type: record.type };
    for (const field of [
      'attempt',
      'tool',
      'effect',
      'rules',
      'error_kind',
      'outcome',
      'kind',
      'status',
      'calls',
    ])
      if (fields[field] !== undefined) kept[field] = fields[field];
    if (typeof fields.call_id === 'string') kept.call_id = name(fields.call_id);
    if (typeof fields.reason === 'string')
      kept.reason = [...minted]
        .reduce((text, [id, alias]) => text.split(id).join(alias), fields.reason)
        .replace(/ap-[0-9a-f-]{36}/g, 'ap-…');
    return kept;
  });
  return { seen, described, held };
}

describe('a long run', () => {
  it('holds only its open calls in memory, and decides and records as with every call held (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 10, maxLength: 50 }), async (steps) => {
        const withRestarts = await play(steps, true);
        const straight = await play(steps, false);
        expect(withRestarts.seen).toEqual(straight.seen);
        expect(withRestarts.described).toEqual(straight.described);
      }),
      { numRuns: 15 },
    );
  });

  it('keeps no row for 2,000 ended calls, and reads an ended call back from the store when asked', async () => {
    const store = new MemoryStore();
    const origin = 'test.local/long-run';
    const signer = logSignerFromPrivateKey(origin, generateEd25519KeyPair().privateKey);
    const engine = new Engine({
      store,
      ledger: await Ledger.open(store, { signer, origin }),
      policy: loadPolicy(
        'version: 1\ndefault: deny\nrules:\n  - { id: all, match: { tools: ["*"] }, effect: allow }\n',
        {
          source: 'all.yaml',
        },
      ),
      tools: TEST_TOOLS,
    });
    const runId = (await engine.startRun({ principal: 'tester', framework: 'vitest' })).run_id;
    let first = '';
    for (let index = 0; index < 2_000; index++) {
      const [verdict] = await engine.decide(runId, [
        { id: null, tool: 'send_invoice', arguments: { to: 'acme', amount: index } },
      ]);
      first ||= verdict?.call_id as string;
      await engine.recordOutcome(runId, { call_id: verdict?.call_id as string, outcome: 'error' });
    }
    expect(engine.heldCalls(runId)).toEqual({ rows: 0, keys: 0, callIds: 2_000 });
    await expect(engine.recordOutcome(runId, { call_id: first, outcome: 'ok' })).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringContaining('already ended (error)'),
    });
    await expect(engine.recordOutcome(runId, { call_id: 'never', outcome: 'ok' })).rejects.toMatchObject({
      kind: 'not-found',
    });
    await engine.endRun(runId);
    await engine.close();
  });
});
