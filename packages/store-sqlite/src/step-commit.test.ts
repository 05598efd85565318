// One durable write per step: a decisions request that carries the previous step's outcomes and
// consumes its grants commits the outcomes, the decisions and the grants in ONE SQLite
// transaction (one fsync under synchronous=FULL), outcomes first. Counted on the real
// connection's transactions (`BEGIN IMMEDIATE` statements run), on a real data folder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPolicy } from '@callgate/core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbedded } from './embedded.js';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const POLICY = `
version: 1
default: deny
rules:
  - id: reads
    match: { tools: [read_file] }
    effect: allow
`;
const TOOLS = [
  { name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
];

/** Counts the write transactions begun on any better-sqlite3 connection while `body` runs. */
async function transactionsDuring(body: () => Promise<unknown>): Promise<number> {
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as {
    run: (this: { source: string }, ...parameters: unknown[]) => unknown;
  };
  probe.close();
  const run = statement.run;
  let begun = 0;
  statement.run = function (this: { source: string }, ...parameters: unknown[]) {
    if (/^BEGIN/i.test(this.source)) begun += 1;
    return run.apply(this, parameters);
  };
  try {
    await body();
  } finally {
    statement.run = run;
  }
  return begun;
}

describe('a run ended with calls still open', () => {
  it('closes them all in one commit', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callgate-step-commit-'));
    folders.push(dataDir);
    const { engine, ledger, close } = await openEmbedded({
      dataDir,
      policy: loadPolicy(POLICY, { source: 'policy.yaml' }),
      tools: TOOLS,
      init: true,
    });
    try {
      const run = await engine.startRun({ principal: 'p', framework: 'vitest' });
      const calls = [0, 1, 2, 3].map((index) => ({
        id: `o${index}`,
        tool: 'read_file',
        arguments: { path: `p${index}` },
      }));
      await engine.decide(run.run_id, calls, { consumeGrants: true });
      const closing = await transactionsDuring(() => engine.endRun(run.run_id, 'failed'));
      // The four decided-not-completed call-ends in one commit; then run-end and the run's row.
      expect(closing).toBe(3);
      const bundle = await ledger.exportRun(run.run_id);
      const ends = bundle.records.filter((record) => record.type === 'call-end');
      expect(ends.map((record) => ('outcome' in record ? record.outcome : ''))).toEqual(
        Array(4).fill('decided-not-completed'),
      );
    } finally {
      await close();
    }
  });
});

describe('a step with carried outcomes', () => {
  it.each(['NORMAL', 'FULL'] as const)(
    'commits outcomes, decisions and grants once (synchronous=%s)',
    async (synchronous) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'callgate-step-commit-'));
      folders.push(dataDir);
      const { engine, ledger, close } = await openEmbedded({
        dataDir,
        policy: loadPolicy(POLICY, { source: 'policy.yaml' }),
        tools: TOOLS,
        synchronous,
        init: true,
      });
      try {
        const run = await engine.startRun({ principal: 'p', framework: 'vitest' });
        const call = (index: number) => ({
          id: `c${index}`,
          tool: 'read_file',
          arguments: { path: `p${index}` },
        });
        const first = await engine.decideStep(run.run_id, [call(0), call(1)], { consumeGrants: true });
        expect(first.verdicts.map((verdict) => verdict.grant_consumed)).toEqual([true, true]);
        let second: Awaited<ReturnType<typeof engine.decideStep>> | undefined;
        const transactions = await transactionsDuring(async () => {
          second = await engine.decideStep(run.run_id, [call(2)], {
            consumeGrants: true,
            outcomes: [
              { call_id: 'c0', outcome: 'ok', result: 'a', grant_consumed: true },
              { call_id: 'c1', outcome: 'error', grant_consumed: true },
              { call_id: 'c1', outcome: 'ok', grant_consumed: true },
              { call_id: 'nope', outcome: 'ok' },
            ],
          });
        });
        expect(transactions).toBe(1);
        expect(second?.verdicts[0]).toMatchObject({ status: 'allowed', grant_consumed: true });
        expect(second?.outcomes.map((item) => ('error' in item ? item.error.kind : item.outcome))).toEqual([
          'ok',
          'error',
          'conflict',
          'not-found',
        ]);
        // The same step as an outcome request, then a decisions request, costs two.
        const apart = await transactionsDuring(async () => {
          await engine.recordOutcome(run.run_id, { call_id: 'c2', outcome: 'ok', grant_consumed: true });
          await engine.decideStep(run.run_id, [call(3)], { consumeGrants: true });
        });
        expect(apart).toBe(2);
        await engine.recordOutcome(run.run_id, { call_id: 'c3', outcome: 'ok', grant_consumed: true });
        // In the ledger: the carried call-ends, then the new decision.
        const bundle = await ledger.exportRun(run.run_id);
        const types = bundle.records.map(
          (record) => `${record.type}:${'call_id' in record ? record.call_id : ''}`,
        );
        expect(types.slice(-6)).toEqual([
          'call-end:c0',
          'call-end:c1',
          'call-decision:c2',
          'call-end:c2',
          'call-decision:c3',
          'call-end:c3',
        ]);
      } finally {
        await close();
      }
    },
  );
});
