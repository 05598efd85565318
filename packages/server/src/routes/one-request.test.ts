// One request per allowed call: a decision that consumes its grant, outcomes carried by the
// next decision or by the run's end, and the batch form of the outcomes route.

import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

async function startedRun() {
  const app = await testApp();
  const run = await app.call('POST', '/v1/runs', { key: app.keys.agent, body: { framework: 'vitest' } });
  return { ...app, id: run.json.run_id as string };
}

describe('one request per allowed call', () => {
  it('consumes the grant of each allowed call with its decision, when asked', async () => {
    const { call, keys, engine, id } = await startedRun();
    const decided = await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      body: {
        consume: true,
        calls: [
          { id: 'c1', tool: 'read_file', arguments: { path: 'a' } },
          { id: 'c2', tool: 'read_file', arguments: { path: 'b' }, consume: false },
          { id: 'c3', tool: 'delete_file', arguments: { path: '/' } },
        ],
      },
    });
    expect(decided.status).toBe(200);
    const [first, second, third] = decided.json.verdicts;
    expect(first).toMatchObject({ status: 'allowed', grant_consumed: true, grant: { call_id: 'c1' } });
    expect(second.status).toBe('allowed');
    expect(second.grant_consumed).toBeUndefined();
    expect(third).toMatchObject({ status: 'refused' });
    expect(third.grant_consumed).toBeUndefined();
    // The consumed grant is spent: neither a consume request nor the gateway can honour it again.
    const reused = await call('POST', '/v1/grants/consume', {
      key: keys.agent,
      body: {
        token: first.grant.token,
        run_id: id,
        call_id: 'c1',
        tool: 'read_file',
        arguments_digest: first.arguments_digest,
      },
    });
    expect(reused.status).toBe(409);
    expect(reused.json.error.kind).toBe('grant-invalid');
    expect(
      await engine.consumeOutstandingGrant({ tool: 'read_file', arguments_digest: first.arguments_digest }),
    ).toBeUndefined();
    // The call whose consume was switched off keeps an outstanding grant.
    const kept = await call('POST', '/v1/grants/consume', {
      key: keys.agent,
      body: {
        token: second.grant.token,
        run_id: id,
        call_id: 'c2',
        tool: 'read_file',
        arguments_digest: second.arguments_digest,
      },
    });
    expect(kept.status).toBe(200);
  });

  it('records the previous step’s outcomes, in order, before deciding the next step', async () => {
    const { call, keys, engine, id } = await startedRun();
    const step1 = await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      body: {
        consume: true,
        calls: [
          { id: 'a1', tool: 'read_file', arguments: { path: 'a' } },
          { id: 'a2', tool: 'read_file', arguments: { path: 'b' } },
        ],
      },
    });
    expect(step1.json.outcomes).toBeUndefined();
    const step2 = await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      body: {
        consume: true,
        outcomes: [
          { call_id: 'a2', outcome: 'ok', result: 'B', grant_consumed: true },
          { call_id: 'a1', outcome: 'error', result: 'boom', grant_consumed: true },
          { call_id: 'never-decided', outcome: 'ok' },
        ],
        calls: [{ id: 'b1', tool: 'read_file', arguments: { path: 'c' } }],
      },
    });
    expect(step2.status).toBe(200);
    expect(step2.json.outcomes).toEqual([
      { call_id: 'a2', outcome: 'ok' },
      { call_id: 'a1', outcome: 'error' },
      { call_id: 'never-decided', error: expect.objectContaining({ kind: 'not-found' }) },
    ]);
    expect(step2.json.verdicts[0]).toMatchObject({ call_id: 'b1', status: 'allowed', grant_consumed: true });
    const records = await engine.store.readRunRecords(id);
    const order = records
      .filter((record) => record.type === 'call-end' || record.type === 'call-decision')
      .map((record) => `${record.type}:${(record as { call_id: string }).call_id}`);
    expect(order).toEqual([
      'call-decision:a1',
      'call-decision:a2',
      'call-end:a2',
      'call-end:a1',
      'call-decision:b1',
    ]);
    const ends = records.filter((record) => record.type === 'call-end');
    expect(ends.map((record) => (record as { grant_consumed: boolean }).grant_consumed)).toEqual([
      true,
      true,
    ]);
  });

  it('records several outcomes with one request, and the last ones with the run’s end', async () => {
    const { call, keys, engine, id } = await startedRun();
    await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      body: {
        consume: true,
        calls: ['x1', 'x2', 'x3'].map((callId) => ({
          id: callId,
          tool: 'read_file',
          arguments: { path: callId },
        })),
      },
    });
    const batch = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      body: {
        outcomes: [
          { call_id: 'x1', outcome: 'ok', grant_consumed: true },
          { call_id: 'x1', outcome: 'ok', grant_consumed: true },
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect(batch.json.outcomes).toEqual([
      { call_id: 'x1', outcome: 'ok' },
      { call_id: 'x1', error: expect.objectContaining({ kind: 'conflict' }) },
    ]);
    const malformed = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      body: { outcomes: [{ call_id: 'x2', outcome: 'fine' }] },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.path).toBe('body.outcomes[0].outcome');
    const ended = await call('POST', `/v1/runs/${id}/end`, {
      key: keys.agent,
      body: { status: 'completed', outcomes: [{ call_id: 'x2', outcome: 'ok', grant_consumed: true }] },
    });
    expect(ended.status).toBe(200);
    expect(ended.json).toMatchObject({
      run_id: id,
      status: 'completed',
      outcomes: [{ call_id: 'x2', outcome: 'ok' }],
    });
    const records = await engine.store.readRunRecords(id);
    const tail = records
      .slice(-3)
      .map((record) =>
        record.type === 'call-end' ? `${record.type}:${record.call_id}:${record.outcome}` : record.type,
      );
    // x2 ended as sent, x3 never reported: decided-not-completed, then the run's end.
    expect(tail).toEqual(['call-end:x2:ok', 'call-end:x3:decided-not-completed', 'run-end']);
  });
});

describe('a batch of outcomes, generated', () => {
  it('records each decided call once, in the order given; a repeat is a conflict, an unknown call not found', async () => {
    const decided = ['d0', 'd1', 'd2', 'd3', 'd4'];
    const batches = fc.array(
      fc.record({
        call_id: fc.constantFrom(...decided, 'nope'),
        outcome: fc.constantFrom('ok', 'error'),
      }),
      { minLength: 1, maxLength: 12 },
    );
    await fc.assert(
      fc.asyncProperty(batches, fc.boolean(), async (batch, withDecide) => {
        const { call, keys, engine, id } = await startedRun();
        await call('POST', `/v1/runs/${id}/decisions`, {
          key: keys.agent,
          body: {
            consume: true,
            calls: decided.map((callId) => ({ id: callId, tool: 'read_file', arguments: { path: callId } })),
          },
        });
        const answer = withDecide
          ? await call('POST', `/v1/runs/${id}/decisions`, {
              key: keys.agent,
              body: { outcomes: batch, calls: [{ id: 'next', tool: 'read_file', arguments: { path: 'n' } }] },
            })
          : await call('POST', `/v1/runs/${id}/outcomes`, { key: keys.agent, body: { outcomes: batch } });
        expect(answer.status).toBe(200);
        const seen = new Set<string>();
        const expected = batch.map(({ call_id, outcome }) => {
          if (call_id === 'nope') return { call_id, kind: 'not-found' };
          if (seen.has(call_id)) return { call_id, kind: 'conflict' };
          seen.add(call_id);
          return { call_id, outcome };
        });
        expect(
          answer.json.outcomes.map(
            (result: { call_id: string; outcome?: string; error?: { kind: string } }) =>
              result.error ? { call_id: result.call_id, kind: result.error.kind } : result,
          ),
        ).toEqual(expected);
        const records = await engine.store.readRunRecords(id);
        const ends = records.filter((record) => record.type === 'call-end').map((record) => record.call_id);
        expect(ends).toEqual([...seen]);
        if (withDecide) expect(records.at(-1)).toMatchObject({ type: 'call-decision', call_id: 'next' });
      }),
      { numRuns: 25 },
    );
  });
});
