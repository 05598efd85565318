import { describe, expect, it } from 'vitest';
import { testApp } from '../test-support.js';

describe('bundles and verification', () => {
  it('exports a run that verifies against the server’s key, and catches a tampered one', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const runId = run.json.run_id;
    await call('POST', `/v1/runs/${runId}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }] },
    });
    await call('POST', `/v1/runs/${runId}/outcomes`, {
      key: keys.agent,
      body: { call_id: 'c1', outcome: 'ok', result: 'x' },
    });
    await call('POST', `/v1/runs/${runId}/end`, { key: keys.agent });
    const bundle = await call('GET', `/v1/runs/${runId}/bundle?openings=true`, { key: keys.reviewer });
    expect(bundle.status).toBe(200);
    expect(bundle.json.format).toBe('callgate-bundle/1');
    const report = await call('POST', '/v1/verify?strict=true', { key: keys.reviewer, body: bundle.json });
    expect(report.json).toMatchObject({ ok: true, failures: [] });
    expect(report.json.records).toBe(bundle.json.records.length);
    const tampered = structuredClone(bundle.json);
    const decision = tampered.records.find((record: { type: string }) => record.type === 'call-decision');
    decision.effect = 'deny';
    const bad = await call('POST', '/v1/verify', { key: keys.agent, body: tampered });
    expect(bad.status).toBe(200);
    expect(bad.json.ok).toBe(false);
    expect(bad.json.failures.length).toBeGreaterThan(0);
    expect((await call('GET', `/v1/runs/${runId}/bundle`, { key: keys.otherAgent })).status).toBe(404);
    expect((await call('GET', '/v1/runs/nope/bundle', { key: keys.admin })).status).toBe(404);
  });

  it('lists the tools the server knows', async () => {
    const { call, keys } = await testApp();
    const tools = await call('GET', '/v1/tools', { key: keys.agent });
    expect(tools.json.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'read_file',
      'send_invoice',
      'delete_file',
    ]);
  });
});

describe('health and keys', () => {
  it('answers health without a key', async () => {
    const { call } = await testApp();
    expect(await call('GET', '/v1/health')).toMatchObject({ status: 200, json: { status: 'ok' } });
  });

  it('lets only admins manage keys, never showing a hash', async () => {
    const { call, keys } = await testApp();
    expect((await call('GET', '/v1/keys', { key: keys.reviewer })).status).toBe(403);
    const created = await call('POST', '/v1/keys', {
      key: keys.admin,
      body: { role: 'reviewer', name: 'carol' },
    });
    expect(created.status).toBe(201);
    expect(created.json.key).toMatch(/^cg_[A-Za-z0-9_-]{43}$/);
    expect(
      (await call('POST', '/v1/keys', { key: keys.admin, body: { role: 'reviewer', name: 'carol' } })).status,
    ).toBe(409);
    const listed = await call('GET', '/v1/keys', { key: keys.admin });
    expect(listed.text).not.toContain('key_hash');
    expect(listed.json.keys.map((key: { name: string }) => key.name)).toContain('carol');
    expect((await call('GET', '/v1/approvals', { key: created.json.key })).status).toBe(200);
    expect((await call('DELETE', '/v1/keys/carol', { key: keys.admin })).json).toEqual({
      revoked: true,
      name: 'carol',
    });
    expect((await call('GET', '/v1/approvals', { key: created.json.key })).status).toBe(401);
    expect((await call('DELETE', '/v1/keys/carol', { key: keys.admin })).status).toBe(404);
  });
});
