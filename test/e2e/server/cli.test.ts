// The approvals CLI and key management against a running `callgate serve`, as a user runs them.
import { CallgateClient } from '@callgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCallgate, type ServerProcess, startCallgate } from './harness.js';

let server: ServerProcess;

beforeAll(async () => {
  server = await startCallgate({ keys: { bot: 'agent', dana: 'reviewer', root: 'admin' } });
}, 60_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
}, 30_000);

describe('callgate approvals and keys against a running server', () => {
  it('lists, shows and answers approvals; an agent key cannot answer', async () => {
    const agent = new CallgateClient({ url: server.url, apiKey: server.keys.bot ?? '' });
    const run = await agent.startRun({ framework: 'cli-test' });
    const { verdicts } = await agent.decide(run.run_id, [
      {
        id: 'big',
        tool: 'send_invoice',
        arguments: { to: 'acme', amount: 9000 },
        injected: { account_id: 'acct-7' },
      },
      { id: 'bigger', tool: 'send_invoice', arguments: { to: 'acme', amount: 19000 } },
    ]);
    const [first, second] = verdicts.map((verdict) => verdict.approval?.id ?? '');
    const reviewerEnv = { CALLGATE_URL: server.url, CALLGATE_API_KEY: server.keys.dana ?? '' };

    const listed = await runCallgate(['approvals', 'list'], reviewerEnv);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(first);
    expect(listed.stdout).toContain('send_invoice');

    const shown = await runCallgate(['approvals', 'show', first ?? '', '--json'], reviewerEnv);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      id: first,
      status: 'pending',
      arguments: { amount: 9000 },
    });

    const text = await runCallgate(['approvals', 'show', first ?? ''], reviewerEnv);
    expect(text.stdout).toContain('  arguments  {"amount":9000,"to":"acme"}  (from the model)');
    expect(text.stdout).toContain(
      '  injected   {"account_id":"acct-7"}  (added by the framework, not from the model)',
    );
    const plain = await runCallgate(['approvals', 'show', second ?? ''], reviewerEnv);
    expect(plain.stdout).not.toContain('injected');

    const byAgent = await runCallgate([
      'approvals',
      'approve',
      first ?? '',
      '--url',
      server.url,
      '--key',
      server.keys.bot ?? '',
    ]);
    expect(byAgent.code).toBe(1);
    expect(byAgent.stderr).toContain('forbidden');
    expect((await agent.getApproval(first ?? '')).approval.status).toBe('pending');

    const approved = await runCallgate(
      ['approvals', 'approve', first ?? '', '--reason', 'fine'],
      reviewerEnv,
    );
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('approved by dana');
    const denied = await runCallgate(
      ['approvals', 'deny', second ?? '', '--reason', 'too much'],
      reviewerEnv,
    );
    expect(denied.stdout).toContain('denied by dana');
    const twice = await runCallgate(['approvals', 'deny', first ?? ''], reviewerEnv);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('conflict');

    const state = await agent.getApproval(first ?? '');
    expect(state.approval).toMatchObject({ status: 'approved', reviewer: 'dana', response_reason: 'fine' });
    expect(state.grant?.token).toMatch(/^cgt_/);
  }, 60_000);

  it('revokes a key while the server runs: it stops working at once', async () => {
    const admin = new CallgateClient({ url: server.url, apiKey: server.keys.root ?? '' });
    const created = await admin.createKey({ role: 'reviewer', name: 'temp' });
    const temp = new CallgateClient({ url: server.url, apiKey: created.key });
    expect(await temp.listApprovals()).toBeInstanceOf(Array);
    const listed = await runCallgate(['keys', 'list', '--data', server.dataDir]);
    expect(listed.stdout).toMatch(/temp\s+reviewer/);
    expect(listed.stdout).not.toContain(created.key);
    expect((await runCallgate(['keys', 'revoke', 'temp', '--data', server.dataDir])).code).toBe(0);
    await expect(temp.listApprovals()).rejects.toMatchObject({ kind: 'unauthorized' });
  }, 60_000); // seven CLI processes start one after another (about 3 s each on a loaded machine)

  it('export on the folder of a running server names that server’s address, and the --url form works', async () => {
    const agent = new CallgateClient({ url: server.url, apiKey: server.keys.bot ?? '' });
    const run = await agent.startRun({ framework: 'cli-test' });
    const refused = await runCallgate(['export', '--run', run.run_id, '--data', server.dataDir]);
    // Refused, not bad input: the exit-code table's 1 (docs/operations.md).
    expect(refused.code).toBe(1);
    // The server listens on a free port, not the default one: the hint says which.
    expect(refused.stderr).toContain(
      `callgate export --url ${server.url} --key <API key> --run ${run.run_id}`,
    );
    expect(server.url).not.toBe('http://127.0.0.1:7420');
    // So does a second server started on the same folder.
    const second = await runCallgate(['serve', '--data', server.dataDir, '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`It serves ${server.url}.`);
    const through = await runCallgate([
      'export',
      '--run',
      run.run_id,
      '--url',
      server.url,
      '--key',
      server.keys.bot ?? '',
    ]);
    expect(through.code).toBe(0);
    expect(JSON.parse(through.stdout).records.length).toBeGreaterThan(0);
  }, 60_000);

  it('serves its OpenAPI document and health without a key', async () => {
    const anonymous = new CallgateClient({ url: server.url });
    expect(await anonymous.health()).toMatchObject({ status: 'ok' });
    expect((await anonymous.openApi()).openapi).toBe('3.1.0');
    await expect(anonymous.listRuns()).rejects.toMatchObject({
      kind: 'unauthorized',
      details: { status: 401 },
    });
  });
});
