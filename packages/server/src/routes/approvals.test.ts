import { testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';

async function pendingApproval(options: Parameters<typeof testApp>[0] = {}) {
  const context = await testApp(options);
  const { call, keys } = context;
  const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
  const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
    key: keys.agent,
    body: { calls: [{ id: 'pay', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } }] },
  });
  return {
    ...context,
    runId: run.json.run_id as string,
    approvalId: decided.json.verdicts[0].approval.id as string,
  };
}

describe('approvals', () => {
  it('an agent key approving or denying gets 403 and the approval stays pending', async () => {
    const { call, keys, approvalId, engine } = await pendingApproval();
    const approve = await call('POST', `/v1/approvals/${approvalId}/approve`, {
      key: keys.agent,
      body: { reason: 'me' },
    });
    expect(approve.status).toBe(403);
    expect(approve.json.error.kind).toBe('forbidden');
    const deny = await call('POST', `/v1/approvals/${approvalId}/deny`, { key: keys.agent, body: {} });
    expect(deny.status).toBe(403);
    expect((await engine.store.getApproval(approvalId))?.status).toBe('pending');
  });

  it('lets an agent list the approvals of its own runs only', async () => {
    const { call, keys, approvalId, runId } = await pendingApproval();
    expect((await call('GET', '/v1/approvals', { key: keys.agent })).json.error.path).toBe('query.run_id');
    const own = await call('GET', `/v1/approvals?run_id=${runId}`, { key: keys.agent });
    expect(own.json.approvals.map((approval: { id: string }) => approval.id)).toEqual([approvalId]);
    expect((await call('GET', `/v1/approvals?run_id=${runId}`, { key: keys.otherAgent })).status).toBe(404);
  });

  it('lists pending approvals for reviewers', async () => {
    const { call, keys, approvalId, runId } = await pendingApproval();
    const listed = await call('GET', '/v1/approvals?status=pending', { key: keys.reviewer });
    expect(listed.json.approvals.map((approval: { id: string }) => approval.id)).toEqual([approvalId]);
    const byRun = await call('GET', `/v1/approvals?run_id=${runId}&status=approved`, { key: keys.admin });
    expect(byRun.json.approvals).toEqual([]);
    const bad = await call('GET', '/v1/approvals?status=maybe', { key: keys.reviewer });
    expect(bad.status).toBe(400);
    expect(bad.json.error.path).toBe('query.status');
  });

  it('records the reviewer’s key name; the grant goes to the owning agent and admins, never to reviewers', async () => {
    const { call, keys, approvalId, engine, runId } = await pendingApproval();
    const approved = await call('POST', `/v1/approvals/${approvalId}/approve`, {
      key: keys.reviewer,
      body: { reason: 'known vendor' },
    });
    expect(approved.status).toBe(200);
    expect(approved.json.approval).toMatchObject({
      status: 'approved',
      reviewer: 'reviewer-1',
      response_reason: 'known vendor',
    });
    expect(approved.json.grant).toBeUndefined();
    const asReviewer = await call('GET', `/v1/approvals/${approvalId}`, { key: keys.reviewer });
    expect(asReviewer.json.approval.status).toBe('approved');
    expect(asReviewer.json.grant).toBeUndefined();
    const asAgent = await call('GET', `/v1/approvals/${approvalId}`, { key: keys.agent });
    expect(asAgent.json.grant).toMatchObject({ run_id: runId, call_id: 'pay', tool: 'send_invoice' });
    expect(asAgent.json.arguments).toEqual({ to: 'acme', amount: 5000 });
    const asAdmin = await call('GET', `/v1/approvals/${approvalId}`, { key: keys.admin });
    expect(asAdmin.json.grant.token).toBe(asAgent.json.grant.token);
    const asOtherAgent = await call('GET', `/v1/approvals/${approvalId}`, { key: keys.otherAgent });
    expect(asOtherAgent.status).toBe(404);
    const records = await engine.store.readRunRecords(runId);
    const response = records.find((record) => record.type === 'approval-response');
    expect(response).toMatchObject({ status: 'approved', reviewer: 'reviewer-1', reason: 'known vendor' });
  });

  it('answers an approval exactly once', async () => {
    const { call, keys, approvalId } = await pendingApproval();
    const answers = await Promise.all([
      call('POST', `/v1/approvals/${approvalId}/approve`, { key: keys.reviewer, body: {} }),
      call('POST', `/v1/approvals/${approvalId}/deny`, { key: keys.admin, body: { reason: 'no' } }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const missing = await call('POST', '/v1/approvals/nope/approve', { key: keys.reviewer, body: {} });
    expect(missing.status).toBe(404);
  });

  it('long-polls: a waiting agent gets the grant as soon as a reviewer approves', async () => {
    const { call, keys, approvalId } = await pendingApproval();
    const started = Date.now();
    const waiting = call('GET', `/v1/approvals/${approvalId}?wait=10`, { key: keys.agent });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await call('POST', `/v1/approvals/${approvalId}/approve`, { key: keys.reviewer, body: {} });
    const state = await waiting;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(state.json.approval.status).toBe('approved');
    expect(state.json.grant.token).toMatch(/^cgt_/);
    const tooLong = await call('GET', `/v1/approvals/${approvalId}?wait=61`, { key: keys.agent });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.path).toBe('query.wait');
  });

  it('lets the agent that waits withdraw its approval, and no one else', async () => {
    const { call, keys, approvalId } = await pendingApproval();
    expect(
      (await call('POST', `/v1/approvals/${approvalId}/withdraw`, { key: keys.reviewer, body: {} })).status,
    ).toBe(403);
    expect(
      (await call('POST', `/v1/approvals/${approvalId}/withdraw`, { key: keys.otherAgent, body: {} })).status,
    ).toBe(404);
    const withdrawn = await call('POST', `/v1/approvals/${approvalId}/withdraw`, {
      key: keys.agent,
      body: { reason: 'cancelled' },
    });
    expect(withdrawn.json.approval).toMatchObject({ status: 'withdrawn', response_reason: 'cancelled' });
    expect(
      (await call('POST', `/v1/approvals/${approvalId}/withdraw`, { key: keys.agent, body: {} })).status,
    ).toBe(409);
    expect(
      (await call('POST', `/v1/approvals/${approvalId}/approve`, { key: keys.reviewer, body: {} })).status,
    ).toBe(409);
  });

  it('a reviewer’s edit is a denial under a policy that does not allow edits', async () => {
    const { call, keys, approvalId } = await pendingApproval();
    const edited = await call('POST', `/v1/approvals/${approvalId}/approve`, {
      key: keys.reviewer,
      body: { arguments: { to: 'acme', amount: 10 } },
    });
    expect(edited.status).toBe(200);
    expect(edited.json.approval).toMatchObject({ status: 'denied', edited: true });
    expect(edited.json.effective).toBe('denied');
    expect(edited.json.message).toContain('allow_edits: false');
    expect(edited.json.message).toContain('denied');
  });

  it('says what a plain answer amounted to, without a message', async () => {
    const approved = await pendingApproval();
    const answer = await approved.call('POST', `/v1/approvals/${approved.approvalId}/approve`, {
      key: approved.keys.reviewer,
      body: { arguments: { to: 'acme', amount: 5000 } },
    });
    expect(answer.json).toEqual({
      approval: expect.objectContaining({ status: 'approved' }),
      effective: 'approved',
    });
    const denied = await pendingApproval();
    const no = await denied.call('POST', `/v1/approvals/${denied.approvalId}/deny`, {
      key: denied.keys.reviewer,
      body: { reason: 'no' },
    });
    expect(no.json).toEqual({ approval: expect.objectContaining({ status: 'denied' }), effective: 'denied' });
  });
});

describe('grants', () => {
  it('consumes a grant once, for exactly its call', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const runId = run.json.run_id;
    const decided = await call('POST', `/v1/runs/${runId}/decisions`, {
      key: keys.agent,
      body: {
        calls: [
          { id: 'r1', tool: 'read_file', arguments: { path: 'a' } },
          { id: 'r2', tool: 'read_file', arguments: { path: 'b' } },
        ],
      },
    });
    const [first, second] = decided.json.verdicts;
    const consume = (body: unknown, key = keys.agent) => call('POST', '/v1/grants/consume', { key, body });
    const ok = await consume({
      token: first.grant.token,
      run_id: runId,
      call_id: 'r1',
      tool: 'read_file',
      arguments: { path: 'a' },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({
      consumed: true,
      call_id: 'r1',
      arguments_digest: first.arguments_digest,
    });
    const reused = await consume({
      token: first.grant.token,
      run_id: runId,
      call_id: 'r1',
      tool: 'read_file',
      arguments: { path: 'a' },
    });
    expect(reused.status).toBe(409);
    expect(reused.json.error.kind).toBe('grant-invalid');
    const altered = await consume({
      token: second.grant.token,
      run_id: runId,
      call_id: 'r2',
      tool: 'read_file',
      arguments: { path: '/etc/passwd' },
    });
    expect(altered.status).toBe(409);
    const both = await consume({
      token: 'x',
      run_id: runId,
      call_id: 'r2',
      tool: 'read_file',
      arguments: {},
      arguments_digest: second.arguments_digest,
    });
    expect(both.status).toBe(400);
    expect(
      (
        await consume(
          { token: 'x', run_id: runId, call_id: 'r2', tool: 'read_file', arguments: {} },
          keys.reviewer,
        )
      ).status,
    ).toBe(403);
  });

  it('refuses an agent a grant of a run it does not own, without spending it', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const runId = run.json.run_id;
    const decided = await call('POST', `/v1/runs/${runId}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'r1', tool: 'read_file', arguments: { path: 'a' } }] },
    });
    const { grant, arguments_digest } = decided.json.verdicts[0];
    const body = { token: grant.token, run_id: runId, call_id: 'r1', tool: 'read_file', arguments_digest };
    expect((await call('POST', '/v1/grants/consume', { key: keys.otherAgent, body })).status).toBe(409);
    expect((await call('POST', '/v1/grants/consume', { key: keys.agent, body })).status).toBe(200);
  });
});
