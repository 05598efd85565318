import { testEngine } from '@callgate/testing';
import { describe, expect, it } from 'vitest';

describe('Engine in remote style (decide, then run elsewhere)', () => {
  it('issues a grant per allowed call that opens only that call, once', async () => {
    const { engine, runId } = await testEngine();
    const [verdict] = await engine.decide(
      runId,
      [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }],
      {
        issueGrants: true,
      },
    );
    expect(verdict?.status).toBe('allowed');
    const token = verdict?.grant?.token as string;
    const binding = {
      run_id: runId,
      call_id: 'c1',
      tool: 'read_file',
      arguments_digest: verdict?.arguments_digest as string,
    };
    await expect(engine.consumeGrant(token, binding)).resolves.toMatchObject({ call_id: 'c1' });
    await expect(engine.consumeGrant(token, binding)).rejects.toMatchObject({ kind: 'grant-invalid' });
  });

  it('lets a gateway consume the outstanding grant of a call a hook already decided', async () => {
    const { engine, runId } = await testEngine();
    const [verdict] = await engine.decide(
      runId,
      [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }],
      {
        issueGrants: true,
      },
    );
    const digest = verdict?.arguments_digest as string;
    await expect(
      engine.consumeOutstandingGrant({ tool: 'read_file', arguments_digest: digest }),
    ).resolves.toMatchObject({
      call_id: 'c1',
      run_id: runId,
    });
    await expect(
      engine.consumeOutstandingGrant({ tool: 'read_file', arguments_digest: digest }),
    ).resolves.toBeUndefined();
  });

  it('consumes an outstanding grant only in a run of the principal asked for', async () => {
    const { engine, runId } = await testEngine();
    const other = await engine.startRun({ principal: 'someone-else', framework: 'vitest' });
    const call = { id: 'c1', tool: 'read_file', arguments: { path: 'a' } };
    await engine.decide(other.run_id, [call], { issueGrants: true });
    const [verdict] = await engine.decide(runId, [call], { issueGrants: true });
    const query = { tool: 'read_file', arguments_digest: verdict?.arguments_digest as string };
    await expect(engine.consumeOutstandingGrant({ ...query, principal: 'tester' })).resolves.toMatchObject({
      run_id: runId,
      call_id: 'c1',
    });
    await expect(engine.consumeOutstandingGrant({ ...query, principal: 'tester' })).resolves.toBeUndefined();
    await expect(engine.consumeOutstandingGrant({ ...query, principal: 'nobody' })).resolves.toBeUndefined();
    await expect(
      engine.consumeOutstandingGrant({ ...query, principal: 'someone-else', run_id: runId }),
    ).resolves.toBeUndefined();
    await expect(
      engine.consumeOutstandingGrant({ ...query, principal: 'someone-else' }),
    ).resolves.toMatchObject({ run_id: other.run_id });
  });

  it('answers an approval exactly once; a second answer is a conflict', async () => {
    const { engine, runId } = await testEngine();
    const [verdict] = await engine.decide(runId, [
      { id: 'big', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } },
    ]);
    expect(verdict?.status).toBe('pending');
    const id = verdict?.approval?.id as string;
    const waiting = engine.approval(id, { waitMs: 5_000 });
    const answered = await engine.respondToApproval(id, { approved: true, reviewer: 'alice' });
    expect(answered.grant?.arguments_digest).toBe(verdict?.arguments_digest);
    const seen = await waiting;
    expect(seen.approval.status).toBe('approved');
    expect(seen.grant?.token).toBe(answered.grant?.token);
    await expect(
      engine.respondToApproval(id, { approved: false, reviewer: 'mallory' }),
    ).rejects.toMatchObject({
      kind: 'conflict',
    });
    await expect(
      engine.respondToApproval('ap-nope', { approved: true, reviewer: 'x' }),
    ).rejects.toMatchObject({
      kind: 'not-found',
    });
    await expect(
      engine.respondToApproval(id, { approved: 'yes', reviewer: '' } as never),
    ).rejects.toMatchObject({
      kind: 'request-invalid',
    });
  });

  it('records changed-after-decision when different arguments ran than were decided', async () => {
    const { engine, runId, store } = await testEngine();
    await engine.decide(runId, [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }]);
    const outcome = await engine.recordOutcome(runId, {
      call_id: 'c1',
      outcome: 'ok',
      arguments: { path: '/etc/shadow' },
      result: 'x',
    });
    expect(outcome).toBe('changed-after-decision');
    const end = (await store.readRunRecords(runId)).find((record) => record.type === 'call-end');
    expect(end).toMatchObject({ outcome: 'changed-after-decision' });
    await expect(engine.recordOutcome(runId, { call_id: 'c1', outcome: 'ok' })).rejects.toMatchObject({
      kind: 'conflict',
    });
    await expect(engine.recordOutcome(runId, { call_id: 'nope', outcome: 'ok' })).rejects.toMatchObject({
      kind: 'not-found',
    });
  });

  it('refuses a report that a refused, denied or still-pending call ran', async () => {
    const { engine, runId } = await testEngine();
    const verdicts = await engine.decide(runId, [
      { id: 'no', tool: 'delete_file', arguments: { path: 'x' } },
      { id: 'bad', tool: 'nope', arguments: {} },
      { id: 'wait', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } },
    ]);
    expect(verdicts.map((verdict) => verdict.status)).toEqual(['refused', 'refused', 'pending']);
    for (const callId of ['no', 'bad', 'wait']) {
      await expect(engine.recordOutcome(runId, { call_id: callId, outcome: 'ok' })).rejects.toMatchObject({
        kind: 'conflict',
      });
    }
    await engine.respondToApproval(verdicts[2]?.approval?.id as string, { approved: false, reviewer: 'r' });
    await expect(engine.recordOutcome(runId, { call_id: 'wait', outcome: 'error' })).rejects.toMatchObject({
      kind: 'conflict',
    });
    await expect(engine.recordOutcome(runId, { call_id: 'no', outcome: 'denied' })).resolves.toBe('denied');
  });

  it('ends a run giving every call that never reported its one call-end, and refuses further steps', async () => {
    const { engine, runId, store } = await testEngine();
    await engine.decide(runId, [
      { id: 'c1', tool: 'read_file', arguments: { path: 'a' } },
      { id: 'c2', tool: 'delete_file', arguments: { path: 'b' } },
    ]);
    await engine.endRun(runId);
    const records = await store.readRunRecords(runId);
    const ends = records.filter((record) => record.type === 'call-end');
    // Allowed: it may have run. Refused (c2 deletes outside every rule): it did not, and says so.
    expect(ends).toEqual([
      expect.objectContaining({ call_id: 'c1', outcome: 'decided-not-completed' }),
      expect.objectContaining({ call_id: 'c2', outcome: 'denied', grant_consumed: false }),
    ]);
    expect(records.at(-1)).toMatchObject({ type: 'run-end', status: 'completed' });
    await expect(
      engine.decide(runId, [{ id: 'c3', tool: 'read_file', arguments: { path: 'a' } }]),
    ).rejects.toMatchObject({
      kind: 'conflict',
    });
    await expect(engine.decide('no-such-run', [])).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('keeps openings in the vault only when it is on', async () => {
    for (const vault of [false, true]) {
      const { engine, runId, store } = await testEngine({ vault });
      await engine.decide(runId, [{ id: 'c1', tool: 'read_file', arguments: { path: 'secret-plan.txt' } }], {
        message: { role: 'assistant', content: 'reading the plan' },
      });
      const records = await store.readRunRecords(runId);
      expect(JSON.stringify(records)).not.toContain('secret-plan');
      const decision = records.find((record) => record.type === 'call-decision');
      const commitment = decision?.type === 'call-decision' ? (decision.arguments_commitment as string) : '';
      const openings = await store.getOpenings([commitment]);
      expect(openings.length).toBe(vault ? 1 : 0);
      if (vault) expect(openings[0]?.value).toEqual({ path: 'secret-plan.txt' });
    }
  });
});
