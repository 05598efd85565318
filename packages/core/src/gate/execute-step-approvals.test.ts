import {
  approvingReviewer as approve,
  denyingReviewer as deny,
  recordingExecutor as recorder,
  testEngine,
} from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { CallbackApprovalPort, QueueApprovalPort } from '../approvals/port.js';
import { executeStep } from './execute-step.js';

describe('executeStep: approvals', () => {
  it('runs an ask once approved, consuming its grant', async () => {
    const { engine, runId, store } = await testEngine({ ports: [approve] });
    const { ran, execute } = recorder();
    const [result] = await executeStep(
      engine,
      runId,
      [{ id: 'big', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }],
      execute,
    );
    expect(result?.ok).toBe(true);
    expect(ran).toHaveLength(1);
    const records = await store.readRunRecords(runId);
    expect(records.find((r) => r.type === 'approval-response')).toMatchObject({
      status: 'approved',
      reviewer: 'alice',
    });
    expect(records.find((r) => r.type === 'call-end')).toMatchObject({ outcome: 'ok', grant_consumed: true });
  });

  it('refuses an ask that is denied, with the approval id', async () => {
    const { engine, runId } = await testEngine({ ports: [deny] });
    const { ran, execute } = recorder();
    const [result] = await executeStep(
      engine,
      runId,
      [{ id: 'big', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }],
      execute,
    );
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'approval-denied', message: expect.stringContaining('too much') },
    });
    expect(result && !result.ok && result.error.approval_id).toMatch(/^ap-/);
    expect(ran).toHaveLength(0);
  });

  it('expires an ask nobody answers within the wait limit', async () => {
    const { engine, runId } = await testEngine();
    const { ran, execute } = recorder();
    const [result] = await executeStep(
      engine,
      runId,
      [{ id: 'big', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } }],
      execute,
      {
        approvalWaitMs: 50,
      },
    );
    expect(result).toMatchObject({ ok: false, error: { kind: 'approval-expired' } });
    const approval =
      result && !result.ok ? await engine.approval(result.error.approval_id as string) : undefined;
    expect(approval?.approval.status).toBe('withdrawn');
    expect(ran).toHaveLength(0);
  });

  it('expires an approval at the policy’s wait limit', async () => {
    const policy = (await import('@callgate/testing')).TEST_POLICY.replace('wait: 5s', 'wait: 40ms');
    const { engine, runId } = await testEngine({ policy });
    const { ran, execute } = recorder();
    const [result] = await executeStep(
      engine,
      runId,
      [{ id: 'big', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } }],
      execute,
    );
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'approval-expired', message: expect.stringContaining('expired') },
    });
    expect(ran).toHaveLength(0);
  });

  it('withdraws the approval when the step is cancelled', async () => {
    const queue = new QueueApprovalPort();
    const { engine, runId } = await testEngine({ ports: [queue] });
    const { ran, execute } = recorder();
    const controller = new AbortController();
    queue.onRequest(() => setTimeout(() => controller.abort(), 10));
    const [result] = await executeStep(
      engine,
      runId,
      [{ id: 'big', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } }],
      execute,
      {
        signal: controller.signal,
      },
    );
    expect(result).toMatchObject({ ok: false, error: { kind: 'approval-expired' } });
    const approval = await engine.approval((result as { error: { approval_id: string } }).error.approval_id);
    expect(approval.approval).toMatchObject({
      status: 'withdrawn',
      response_reason: 'the step was cancelled',
    });
    expect(queue.pending()).toHaveLength(0);
    expect(ran).toHaveLength(0);
  });

  it('answers through the in-memory queue port', async () => {
    const queue = new QueueApprovalPort();
    const { engine, runId } = await testEngine({ ports: [queue] });
    const { ran, execute } = recorder();
    queue.onRequest((approval) =>
      setTimeout(() => queue.respond(approval.id, { approved: true, reviewer: 'carol' }), 5),
    );
    const [result] = await executeStep(
      engine,
      runId,
      [{ id: 'big', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } }],
      execute,
    );
    expect(result?.ok).toBe(true);
    expect(ran).toHaveLength(1);
  });

  it('counts a reviewer’s edit as a denial unless the policy allows edits', async () => {
    const edit = new CallbackApprovalPort(() => ({
      approved: true,
      reviewer: 'dan',
      arguments: { to: 'acme', amount: 900 },
    }));
    const strict = await testEngine({ ports: [edit] });
    const first = recorder();
    const [refused] = await executeStep(
      strict.engine,
      strict.runId,
      [{ id: 'e', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }],
      first.execute,
    );
    expect(refused).toMatchObject({
      ok: false,
      error: { kind: 'approval-denied', message: expect.stringContaining('edited') },
    });
    expect(first.ran).toHaveLength(0);
    const records = await strict.store.readRunRecords(strict.runId);
    expect(records.find((r) => r.type === 'approval-response')).toMatchObject({
      status: 'denied',
      edited: true,
    });

    const policy = (await import('@callgate/testing')).TEST_POLICY.replace(
      'allow_edits: false',
      'allow_edits: true',
    );
    const lenient = await testEngine({ ports: [edit], policy });
    const second = recorder();
    const [ran] = await executeStep(
      lenient.engine,
      lenient.runId,
      [{ id: 'e', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }],
      second.execute,
    );
    expect(ran?.ok).toBe(true);
    expect(second.ran[0]?.arguments).toEqual({ to: 'acme', amount: 900 });
  });
});

describe('executeStep: outcomes', () => {
  it('records a tool that throws as tool-error and the run goes on', async () => {
    const { engine, runId, store } = await testEngine();
    const results = await executeStep(
      engine,
      runId,
      [
        { id: 'a', tool: 'read_file', arguments: { path: 'missing' } },
        { id: 'b', tool: 'read_file', arguments: { path: 'there' } },
      ],
      async (call) => {
        if (call.arguments.path === 'missing') throw new Error('ENOENT: no such file');
        return 'ok';
      },
    );
    expect(results.map((r) => (r.ok ? 'ok' : r.error.kind))).toEqual(['tool-error', 'ok']);
    const ends = (await store.readRunRecords(runId)).filter((r) => r.type === 'call-end');
    expect(ends.map((r) => r.type === 'call-end' && r.outcome)).toEqual(['error', 'ok']);
  });
});

describe('executeStep: approval and grant ordering', () => {
  it('runs an approved call even when the grant is written after the approval shows approved', async () => {
    const { engine, runId, store } = await testEngine({ ports: [approve] });
    const putGrant = store.putGrant.bind(store);
    store.putGrant = async (grant) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return putGrant(grant);
    };
    const { ran, execute } = recorder();
    const [result] = await executeStep(
      engine,
      runId,
      [{ id: 'slow', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }],
      execute,
    );
    expect(result?.ok).toBe(true);
    expect(ran).toHaveLength(1);
  });
});
