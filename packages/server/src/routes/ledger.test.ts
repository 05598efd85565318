import { testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';

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
    expect(bundle.json.format).toBe('callgate-bundle/3');
    expect(bundle.json.proofs).toBeUndefined();
    // Exported with openings: the run's key is revealed, and the verifier checks the keyed digests.
    expect(bundle.json.run_keys).toEqual([{ run_id: runId, key: expect.stringMatching(/^[\w-]{43}$/) }]);
    const plain = await call('GET', `/v1/runs/${runId}/bundle`, { key: keys.reviewer });
    expect(plain.json.run_keys).toBeUndefined();
    const revealed = await call('GET', `/v1/runs/${runId}/bundle?reveal_run_keys`, { key: keys.reviewer });
    expect(revealed.json.run_keys).toEqual(bundle.json.run_keys);
    // The export's metadata is signed: an edited exported_at fails.
    const edited = await call('POST', '/v1/verify', {
      key: keys.reviewer,
      body: { ...bundle.json, exported_at: bundle.json.exported_at + 1 },
    });
    expect(edited.json.failures.map((failure: { check: string }) => failure.check)).toEqual(['manifest']);
    const report = await call('POST', '/v1/verify?strict=true', { key: keys.reviewer, body: bundle.json });
    expect(report.json).toMatchObject({ ok: true, failures: [] });
    expect(report.json.records).toBe(bundle.json.records.length);
    // Per-record inclusion proofs on request: callgate-bundle/1, which verifies the same way.
    const proven = await call('GET', `/v1/runs/${runId}/bundle?proofs`, { key: keys.reviewer });
    expect(proven.json.format).toBe('callgate-bundle/1');
    expect(proven.json.proofs).toHaveLength(proven.json.records.length);
    const provenReport = await call('POST', '/v1/verify?strict=true', {
      key: keys.reviewer,
      body: proven.json,
    });
    expect(provenReport.json).toMatchObject({ ok: true, failures: [] });
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

  it('verifies the bundle text as sent: another spelling of the same values fails', async () => {
    const { call, keys } = await testApp({ vault: true });
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const runId = run.json.run_id;
    await call('POST', `/v1/runs/${runId}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'c1', tool: 'send_invoice', arguments: { to: 'acme', amount: 500 } }] },
    });
    await call('POST', `/v1/runs/${runId}/end`, { key: keys.agent });
    const bundle = await call('GET', `/v1/runs/${runId}/bundle?openings=true`, { key: keys.reviewer });
    const text = JSON.stringify(bundle.json);
    const headers = { 'content-type': 'application/json' };
    const honest = await call('POST', '/v1/verify', { key: keys.reviewer, raw: text, headers });
    expect(honest.json).toMatchObject({ ok: true });
    const respelled = text.replace('"amount":500', '"amount":499.99999999999999999');
    expect(respelled).not.toBe(text);
    const changed = await call('POST', '/v1/verify', { key: keys.reviewer, raw: respelled, headers });
    expect(changed.json.ok).toBe(false);
    expect(changed.json.failures.map((failure: { check: string }) => failure.check)).toContain('canonical');
  });

  it('reads ?strict and ?openings as bare flags, as well as =true and =false', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const runId = run.json.run_id;
    await call('POST', `/v1/runs/${runId}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }] },
    });
    const bare = await call('GET', `/v1/runs/${runId}/bundle?openings`, { key: keys.reviewer });
    expect(bare.status).toBe(200);
    expect(bare.json.openings).toBeDefined();
    expect(
      (await call('GET', `/v1/runs/${runId}/bundle?openings=true`, { key: keys.reviewer })).json.openings,
    ).toBeDefined();
    expect(
      (await call('GET', `/v1/runs/${runId}/bundle?openings=false`, { key: keys.reviewer })).json.openings,
    ).toBeUndefined();
    const bundle = (await call('GET', `/v1/runs/${runId}/bundle`, { key: keys.reviewer })).json;
    // The run has not ended (and its allowed call has no outcome yet): strict verification fails
    // it, plain verification does not.
    const verify = (query: string) =>
      call('POST', `/v1/verify${query}`, { key: keys.reviewer, body: bundle });
    for (const query of ['?strict', '?strict=', '?strict=true']) {
      const report = await verify(query);
      expect(report.status).toBe(200);
      expect(report.json.failures.map((failure: { check: string }) => failure.check)).toEqual([
        'call-end',
        'run-end',
      ]);
    }
    expect((await verify('?strict=false')).json.ok).toBe(true);
    const wrong = await verify('?strict=yes');
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.path).toBe('query.strict');
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

  it('refuses to revoke the last live admin key', async () => {
    const { call, keys, engine } = await testApp();
    const last = await call('DELETE', '/v1/keys/admin-1', { key: keys.admin });
    expect(last.status).toBe(409);
    expect(last.json.error).toEqual({
      kind: 'conflict',
      message: 'the last admin key cannot be revoked; create another admin key first',
    });
    expect((await call('GET', '/v1/keys', { key: keys.admin })).status).toBe(200);
    const second = await call('POST', '/v1/keys', {
      key: keys.admin,
      body: { role: 'admin', name: 'admin-2' },
    });
    // Two admins revoking each other at once: one of them goes, never both.
    const both = await Promise.all([
      call('DELETE', '/v1/keys/admin-2', { key: keys.admin }),
      call('DELETE', '/v1/keys/admin-1', { key: second.json.key }),
    ]);
    expect(both.filter((answer) => answer.status === 200)).toHaveLength(1);
    const liveAdmins = (await engine.store.listApiKeys()).filter(
      (key) => key.role === 'admin' && key.revoked_at === undefined,
    );
    expect(liveAdmins).toHaveLength(1);
  });
});
