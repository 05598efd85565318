import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyBundle } from '@callgate/core/ledger';
import { POLICY, testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { readPolicyFile } from './config.js';
import { startServer } from './start.js';

const STRICT = `
version: 1
default: deny
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: every-invoice-asks
    match: { tools: [send_invoice] }
    effect: ask
`;

describe('policy reload', () => {
  it('puts a new policy in force for the next decision, recorded in the ledger first', async () => {
    const { call, keys, engine, publicKey } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decide = async () =>
      (
        await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
          key: keys.agent,
          body: { calls: [{ tool: 'send_invoice', arguments: { to: 'acme', amount: 10 } }] },
        })
      ).json.verdicts[0];
    expect((await decide()).decision.effect).toBe('allow');
    const previous = engine.policy.digest;

    const byAgent = await call('POST', '/v1/admin/policy', { key: keys.agent, body: { policy: STRICT } });
    expect(byAgent.status).toBe(403);

    const reloaded = await call('POST', '/v1/admin/policy', {
      key: keys.admin,
      body: { policy: STRICT, source: 'strict.yaml' },
    });
    expect(reloaded.status).toBe(200);
    expect(reloaded.json).toMatchObject({ changed: true, previous_digest: previous, source: 'strict.yaml' });
    const digest = reloaded.json.policy_digest;
    expect(engine.policy.digest).toBe(digest);
    expect(await decide()).toMatchObject({ decision: { effect: 'ask', rules: ['every-invoice-asks'] } });

    // The change is its own run: who, from what, to what; its bundle verifies with the document.
    const records = await engine.store.readRunRecords(reloaded.json.run_id);
    expect(records.map((record) => record.type)).toEqual(['run-start', 'policy-snapshot', 'run-end']);
    expect(records[0]).toMatchObject({
      principal: 'admin-1',
      labels: { event: 'policy-reload', source: 'strict.yaml', previous_digest: previous },
    });
    expect(records[1]).toMatchObject({ policy_digest: digest });
    const bundle = await engine.exportRun(reloaded.json.run_id);
    expect(verifyBundle(bundle, { publicKey, strict: true }).ok).toBe(true);
    // The agent's run recorded the new snapshot before its next decision.
    const runRecords = await engine.store.readRunRecords(run.json.run_id);
    expect(
      runRecords.filter((record) => record.type === 'policy-snapshot').map((r) => r.policy_digest),
    ).toEqual([previous, digest]);

    const again = await call('POST', '/v1/admin/policy', { key: keys.admin, body: { policy: STRICT } });
    expect(again.json).toMatchObject({ changed: false, policy_digest: digest });
    const shown = await call('GET', '/v1/admin/policy', { key: keys.admin });
    expect(shown.json).toMatchObject({ policy_digest: digest, reloadable: false });
  });

  it('refuses a bad policy with its rule id and line:column, and keeps the old one', async () => {
    const { call, keys, engine } = await testApp();
    const before = engine.policy.digest;
    const size = await engine.store.ledgerSize();
    const bad = 'version: 1\nrules:\n  - id: broken\n    when: "args.amount >"\n    effect: allow\n';
    const refused = await call('POST', '/v1/admin/policy', {
      key: keys.admin,
      body: { policy: bad, source: 'new.yaml' },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.kind).toBe('policy-invalid');
    expect(refused.json.error.message).toMatch(/^new\.yaml:4:\d+: rule "broken"/);
    expect(refused.json.error).toMatchObject({ rule: 'broken', line: 4 });
    expect(engine.policy.digest).toBe(before);
    expect(await engine.store.ledgerSize()).toBe(size);
    const noFile = await call('POST', '/v1/admin/policy', { key: keys.admin, body: {} });
    expect(noFile.status).toBe(400);
    expect(noFile.json.error.message).toContain('without a policy file');
  });

  it('reloads its policy file on SIGHUP; a broken file is refused and the old policy stays', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'callgate-reload-'));
    const file = join(dir, 'policy.yaml');
    await writeFile(file, POLICY);
    const { engine, publicKey } = await (await import('@callgate/testing/server')).memoryEngine();
    const errors: unknown[] = [];
    const infos: string[] = [];
    const running = await startServer({
      options: {
        engine,
        publicKey,
        policySource: async () => ({ policy: await readPolicyFile(file), source: file }),
        logger: {
          info: (fields: unknown, message: string) => infos.push(`${message} ${JSON.stringify(fields)}`),
          warn: () => {},
          debug: () => {},
          error: (fields: unknown) => errors.push(fields),
        } as never,
      },
      port: 0,
      signals: ['SIGUSR2'],
    });
    try {
      const initial = engine.policy.digest;
      await writeFile(file, STRICT);
      process.kill(process.pid, 'SIGHUP');
      await expect.poll(() => engine.policy.digest, { timeout: 5000 }).not.toBe(initial);
      const strict = engine.policy.digest;
      await writeFile(file, 'version: 1\nrules:\n  - id: r\n    effect: perhaps\n');
      process.kill(process.pid, 'SIGHUP');
      await expect.poll(() => errors.length, { timeout: 5000 }).toBe(1);
      expect(JSON.stringify(errors[0])).toMatch(/policy\.yaml:4:\d+: rule \\"r\\"/);
      expect(engine.policy.digest).toBe(strict);
      // The same policy again: nothing changes, and the log says the signal was read.
      await writeFile(file, STRICT);
      process.kill(process.pid, 'SIGHUP');
      await expect
        .poll(() => infos.filter((line) => line.includes('unchanged')).length, { timeout: 5000 })
        .toBe(1);
      expect(infos.find((line) => line.includes('unchanged'))).toContain(strict);
      expect(engine.policy.digest).toBe(strict);
    } finally {
      await running.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
