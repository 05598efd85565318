import { expect, it } from 'vitest';
import { makeCall, makeRun } from './fixtures.js';
import type { CurrentStore } from './store-contract.js';

export function runsAndCallsContract(store: CurrentStore): void {
  it('creates and reads back a run, optional fields absent or present', async () => {
    const plain = makeRun();
    const child = makeRun({ parent_run_id: plain.run_id, labels: {} });
    await store().createRun(plain);
    await store().createRun(child);
    expect(await store().getRun(plain.run_id)).toStrictEqual(plain);
    expect(await store().getRun(child.run_id)).toStrictEqual(child);
    expect(await store().getRun('run-missing')).toBeUndefined();
  });

  it('refuses a second run with the same id and keeps the first', async () => {
    const run = makeRun();
    await store().createRun(run);
    await expect(store().createRun({ ...run, principal: 'someone-else' })).rejects.toThrow();
    expect((await store().getRun(run.run_id))?.principal).toBe(run.principal);
  });

  it('lists runs newest first, ties by run_id descending, with limit and an exclusive before', async () => {
    const runs = [
      makeRun({ run_id: 'run-a', started_at: 1000 }),
      makeRun({ run_id: 'run-b', started_at: 3000 }),
      makeRun({ run_id: 'run-c', started_at: 2000 }),
      makeRun({ run_id: 'run-d', started_at: 2000 }),
      makeRun({ run_id: 'run-e', started_at: 500 }),
    ];
    for (const run of runs) await store().createRun(run);
    const ids = (list: { run_id: string }[]) => list.map((run) => run.run_id);
    expect(ids(await store().listRuns())).toEqual(['run-b', 'run-d', 'run-c', 'run-a', 'run-e']);
    expect(ids(await store().listRuns({ limit: 2 }))).toEqual(['run-b', 'run-d']);
    expect(ids(await store().listRuns({ before: 2000 }))).toEqual(['run-a', 'run-e']);
    expect(ids(await store().listRuns({ before: 2001, limit: 1 }))).toEqual(['run-d']);
    expect(await store().listRuns({ before: 500 })).toEqual([]);
  });

  it('ends a run; ending an unknown run does nothing', async () => {
    const run = makeRun();
    await store().createRun(run);
    await store().endRun(run.run_id, 'completed', run.started_at + 42);
    expect(await store().getRun(run.run_id)).toStrictEqual({
      ...run,
      status: 'completed',
      ended_at: run.started_at + 42,
    });
    await expect(store().endRun('run-missing', 'failed', 1)).resolves.toBeUndefined();
    expect(await store().getRun('run-missing')).toBeUndefined();
  });

  it('lists calls in decision order; replacing an attempt keeps its place', async () => {
    const first = makeCall({ call_id: 'call-1', attempt: 1 });
    const other = makeCall({ call_id: 'call-2', attempt: 1, decision: 'ask', approval_id: 'approval-1' });
    const retry = makeCall({ call_id: 'call-1', attempt: 2, minted: true, arguments_digest: null });
    const elsewhere = makeCall({ run_id: 'run-2' });
    for (const call of [first, other, retry, elsewhere]) await store().putCall(call);

    const ended = {
      ...first,
      outcome: 'ok' as const,
      ended_at: first.decided_at + 5,
      idempotency_key: 'inv-7',
    };
    await store().putCall(ended);

    expect(await store().listCalls('run-1')).toStrictEqual([ended, other, retry]);
    expect(await store().listCalls('run-2')).toStrictEqual([elsewhere]);
    expect(await store().listCalls('run-missing')).toEqual([]);
  });

  it('gets the latest attempt of a call', async () => {
    await store().putCall(makeCall({ attempt: 1 }));
    await store().putCall(makeCall({ attempt: 3, decision: 'deny', rules: [] }));
    await store().putCall(makeCall({ attempt: 2, decision: 'refused' }));
    // Updating an earlier attempt afterwards does not make it the latest.
    await store().putCall(makeCall({ attempt: 1, outcome: 'error', ended_at: 9 }));

    const latest = await store().getCall('run-1', 'call-1');
    expect(latest).toStrictEqual(makeCall({ attempt: 3, decision: 'deny', rules: [] }));
    expect(await store().getCall('run-1', 'call-missing')).toBeUndefined();
    expect(await store().getCall('run-missing', 'call-1')).toBeUndefined();
  });
}
