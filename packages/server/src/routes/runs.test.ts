import { testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';

describe('runs', () => {
  it('starts a run whose principal defaults to the key’s name', async () => {
    const { call, keys } = await testApp();
    const started = await call('POST', '/v1/runs', {
      key: keys.agent,
      body: { framework: 'vitest', labels: { team: 'a' } },
    });
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({
      principal: 'agent-1',
      framework: 'vitest',
      labels: { team: 'a' },
      status: 'running',
    });
    const own = await call('POST', '/v1/runs', {
      key: keys.agent,
      body: { framework: 'vitest', principal: 'agent-1' },
    });
    expect(own.json.principal).toBe('agent-1');
    const named = await call('POST', '/v1/runs', {
      key: keys.admin,
      body: { framework: 'vitest', principal: 'alice@example.com' },
    });
    expect(named.json.principal).toBe('alice@example.com');
  });

  it('refuses an agent key a run under another principal (403), so it cannot borrow that principal’s rules', async () => {
    const { call, keys, engine } = await testApp({
      policy: [
        'version: 1',
        'default: deny',
        'rules:',
        '  - id: ops-bot-deletes',
        '    match: { tools: [delete_file] }',
        '    when: run.principal == "ops-bot"',
        '    effect: allow',
      ].join('\n'),
    });
    for (const principal of ['ops-bot', 'reviewer-1', 'admin-1']) {
      const claimed = await call('POST', '/v1/runs', {
        key: keys.agent,
        body: { framework: 'x', principal },
      });
      expect(claimed.status).toBe(403);
      expect(claimed.json.error).toMatchObject({ kind: 'forbidden', path: 'body.principal' });
      expect(claimed.json.error.message).toContain('an agent key acts under its own name');
    }
    expect(await engine.store.listRuns({ limit: 10 })).toEqual([]);
    const own = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'x' } });
    const decided = await call('POST', `/v1/runs/${own.json.run_id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'd1', tool: 'delete_file', arguments: { path: '/' } }] },
    });
    expect(decided.json.verdicts[0]).toMatchObject({ status: 'refused', error: { kind: 'policy-denied' } });
    // An admin key may start a run for the ops bot; its rules then apply.
    const delegated = await call('POST', '/v1/runs', {
      key: keys.admin,
      body: { framework: 'x', principal: 'ops-bot' },
    });
    expect(delegated.status).toBe(201);
    const allowed = await call('POST', `/v1/runs/${delegated.json.run_id}/decisions`, {
      key: keys.admin,
      body: { calls: [{ id: 'd1', tool: 'delete_file', arguments: { path: '/tmp/x' } }] },
    });
    expect(allowed.json.verdicts[0].status).toBe('allowed');
  });

  it('lists runs for reviewers and admins, not agents', async () => {
    const { call, keys } = await testApp();
    await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'one' } });
    await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'two' } });
    const listed = await call('GET', '/v1/runs?limit=1', { key: keys.reviewer });
    expect(listed.status).toBe(200);
    expect(listed.json.runs).toHaveLength(1);
    expect((await call('GET', '/v1/runs', { key: keys.agent })).status).toBe(403);
  });

  it('shows an agent only the runs it owns (started, or is the principal of)', async () => {
    const { call, keys } = await testApp();
    const started = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'x' } });
    const forAgent = await call('POST', '/v1/runs', {
      key: keys.admin,
      body: { framework: 'x', principal: 'agent-1' },
    });
    for (const id of [started.json.run_id, forAgent.json.run_id]) {
      expect((await call('GET', `/v1/runs/${id}`, { key: keys.agent })).status).toBe(200);
      const other = await call('GET', `/v1/runs/${id}`, { key: keys.otherAgent });
      expect(other.status).toBe(404);
      expect(other.json.error.message).toBe(`no run ${id}`);
      const decide = await call('POST', `/v1/runs/${id}/decisions`, {
        key: keys.otherAgent,
        body: { calls: [] },
      });
      expect(decide.status).toBe(404);
      expect((await call('GET', `/v1/runs/${id}`, { key: keys.reviewer })).status).toBe(200);
    }
    const missing = await call('GET', '/v1/runs/nope', { key: keys.otherAgent });
    expect(missing.json.error.message).toBe('no run nope');
  });

  it('decides a step: allowed with a grant, pending with an approval, refused with an error', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const result = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: {
        message: { role: 'assistant', content: 'reading and paying' },
        calls: [
          { id: 'c1', tool: 'read_file', arguments: { path: 'a.txt' } },
          { id: 'c2', tool: 'send_invoice', arguments: '{"to": "acme", "amount": 5000}' },
          { id: 'c3', tool: 'delete_file', arguments: { path: '/' } },
          { tool: 'read_file', arguments: { nope: 1 } },
        ],
      },
    });
    expect(result.status).toBe(200);
    const [allowed, pending, denied, invalid] = result.json.verdicts;
    expect(allowed).toMatchObject({
      call_id: 'c1',
      status: 'allowed',
      decision: { effect: 'allow', rules: ['reads'] },
    });
    expect(allowed.grant).toMatchObject({ v: 1, run_id: run.json.run_id, call_id: 'c1', tool: 'read_file' });
    expect(allowed.grant.token).toMatch(/^cgt_/);
    expect(pending).toMatchObject({
      call_id: 'c2',
      status: 'pending',
      decision: { effect: 'ask', rules: ['large-invoices'] },
    });
    expect(pending.approval).toMatchObject({
      status: 'pending',
      tool: 'send_invoice',
      arguments: { to: 'acme', amount: 5000 },
    });
    expect(pending.grant).toBeUndefined();
    expect(denied).toMatchObject({ call_id: 'c3', status: 'refused', error: { kind: 'policy-denied' } });
    expect(invalid).toMatchObject({ minted: true, status: 'refused', error: { kind: 'tool-args-invalid' } });
  });

  it('registers unknown tools sent with a step and never overrides a known one', async () => {
    const { call, keys, engine } = await testApp({
      policy:
        'version: 1\ndefault: deny\nrules:\n  - id: all\n    match: { tools: ["*"] }\n    effect: allow\n',
    });
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const spec = { name: 'lookup', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } };
    const first = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { tools: [spec], calls: [{ id: 'l1', tool: 'lookup', arguments: { q: 'x' } }] },
    });
    expect(first.json.verdicts[0].status).toBe('allowed');
    expect(engine.registry.has('lookup')).toBe(true);
    const same = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { tools: [spec], calls: [] },
    });
    expect(same.status).toBe(200);
    const changed = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { tools: [{ ...spec, description: 'sneaky' }], calls: [] },
    });
    expect(changed.status).toBe(409);
    expect(changed.json.error).toMatchObject({ kind: 'conflict', path: 'body.tools[0]' });
    expect(engine.registry.get('lookup')?.spec.description).toBeUndefined();
    const broken = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { tools: [{ name: 'broken', inputSchema: { type: 'nonsense' } }], calls: [] },
    });
    expect(broken.status).toBe(400);
    expect(engine.registry.has('broken')).toBe(false);
  });

  it('drops the annotations (and trust claim) of a tool an agent key registers; an admin key may declare them', async () => {
    const { call, keys, engine } = await testApp({
      policy: [
        'version: 1',
        'default: deny',
        'rules:',
        '  - id: read-only',
        '    match: { annotations: { readOnlyHint: true } }',
        '    effect: allow',
      ].join('\n'),
    });
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decisions = (key: string, body: unknown) =>
      call('POST', `/v1/runs/${run.json.run_id}/decisions`, { key, body });
    const nuke = {
      name: 'nuke_prod',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true, destructiveHint: false },
      trust: 'trusted',
    };
    const first = await decisions(keys.agent, {
      tools: [nuke],
      calls: [{ id: 'n1', tool: 'nuke_prod', arguments: {} }],
    });
    expect(first.status).toBe(200);
    expect(first.json.verdicts[0]).toMatchObject({ status: 'refused', error: { kind: 'policy-denied' } });
    expect(engine.registry.get('nuke_prod')?.spec).toEqual({
      name: 'nuke_prod',
      inputSchema: { type: 'object' },
    });
    // The same spec again, annotations and all, is fine; another spec for the name is not.
    expect((await decisions(keys.agent, { tools: [nuke], calls: [] })).status).toBe(200);
    const { annotations: _, trust: __, ...bare } = nuke;
    expect((await decisions(keys.agent, { tools: [bare], calls: [] })).status).toBe(200);
    const changed = await decisions(keys.agent, { tools: [{ ...nuke, description: 'other' }], calls: [] });
    expect(changed.status).toBe(409);
    // A configured tool sent back exactly as the server knows it (annotations included) is fine.
    const readFile = engine.registry.get('read_file')?.spec;
    expect((await decisions(keys.agent, { tools: [readFile], calls: [] })).status).toBe(200);
    // An admin key's annotations are kept.
    const listing = {
      name: 'list_things',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true },
    };
    const admin = await decisions(keys.admin, {
      tools: [listing],
      calls: [{ id: 'l1', tool: 'list_things', arguments: {} }],
    });
    expect(admin.json.verdicts[0].status).toBe('allowed');
    expect(engine.registry.get('list_things')?.spec.annotations).toEqual({ readOnlyHint: true });
  });

  it('records messages and outcomes, then ends the run', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id;
    const decided = await call('POST', `/v1/runs/${id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }] },
    });
    // An outcome may claim `grant_consumed` only once the grant was consumed.
    const verdict = decided.json.verdicts[0];
    const consumed = await call('POST', '/v1/grants/consume', {
      key: keys.agent,
      body: {
        token: verdict.grant.token,
        run_id: id,
        call_id: 'c1',
        tool: 'read_file',
        arguments_digest: verdict.arguments_digest,
      },
    });
    expect(consumed.json.consumed).toBe(true);
    const message = await call('POST', `/v1/runs/${id}/messages`, {
      key: keys.agent,
      body: { role: 'assistant', content: 'done' },
    });
    expect(message.status).toBe(201);
    const outcome = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      body: { call_id: 'c1', outcome: 'ok', result: 'text', duration_ms: 1.5, grant_consumed: true },
    });
    expect(outcome.json).toEqual({ outcome: 'ok' });
    const again = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      body: { call_id: 'c1', outcome: 'ok' },
    });
    expect(again.status).toBe(409);
    const unknown = await call('POST', `/v1/runs/${id}/outcomes`, {
      key: keys.agent,
      body: { call_id: 'zz', outcome: 'ok' },
    });
    expect(unknown.status).toBe(404);
    const shown = await call('GET', `/v1/runs/${id}`, { key: keys.agent });
    expect(shown.json.calls).toHaveLength(1);
    expect(shown.json.calls[0]).toMatchObject({ call_id: 'c1', decision: 'allow', outcome: 'ok' });
    const ended = await call('POST', `/v1/runs/${id}/end`, {
      key: keys.agent,
      body: { status: 'completed' },
    });
    expect(ended.json).toMatchObject({ run_id: id, status: 'completed' });
    expect((await call('POST', `/v1/runs/${id}/end`, { key: keys.agent })).status).toBe(409);
    expect(
      (await call('POST', `/v1/runs/${id}/decisions`, { key: keys.agent, body: { calls: [] } })).status,
    ).toBe(409);
  });

  it('records an outage as a gap record, and refuses a malformed one naming the field', async () => {
    const { call, keys, engine } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const id = run.json.run_id;
    const gap = await call('POST', `/v1/runs/${id}/gaps`, {
      key: keys.agent,
      body: { reason: 'server unreachable', from_ts: 1000, to_ts: 2000, calls: 3 },
    });
    expect(gap.status).toBe(201);
    const records = await engine.store.readRunRecords(id);
    expect(records.at(-1)).toMatchObject({
      type: 'gap',
      reason: 'server unreachable',
      calls: 3,
      from_ts: 1000,
    });
    const backwards = await call('POST', `/v1/runs/${id}/gaps`, {
      key: keys.agent,
      body: { reason: 'x', from_ts: 2000, to_ts: 1000, calls: 0 },
    });
    expect(backwards.status).toBe(400);
    expect(backwards.json.error).toMatchObject({ kind: 'request-invalid', path: 'body.to_ts' });
    const reviewer = await call('POST', `/v1/runs/${id}/gaps`, {
      key: keys.reviewer,
      body: { reason: 'x', from_ts: 1, to_ts: 2, calls: 0 },
    });
    expect(reviewer.status).toBe(403);
  });

  it('refuses a parent run the key cannot see', async () => {
    const { call, keys } = await testApp();
    const parent = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'p' } });
    const child = await call('POST', '/v1/runs', {
      key: keys.agent,
      body: { framework: 'c', parent_run_id: parent.json.run_id },
    });
    expect(child.json.parent_run_id).toBe(parent.json.run_id);
    const foreign = await call('POST', '/v1/runs', {
      key: keys.otherAgent,
      body: { framework: 'c', parent_run_id: parent.json.run_id },
    });
    expect(foreign.status).toBe(404);
  });
});
