import { testApp } from '@callgate/testing/server';
import type { Hono } from 'hono';
import { describe, expect, it } from 'vitest';

/** A tiny browser: keeps the session cookie and reads CSRF tokens from pages. */
function browser(app: Hono) {
  let cookie = '';
  let csrf = '';
  async function request(
    method: string,
    path: string,
    form?: Record<string, string>,
    headers: Record<string, string> = {},
  ) {
    const response = await app.request(path, {
      method,
      redirect: 'manual',
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    const set = response.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0] ?? '';
    const text = await response.text();
    const token = /name="csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) csrf = token;
    return { status: response.status, text, headers: response.headers, setCookie: set };
  }
  return {
    request,
    get: (path: string) => request('GET', path),
    post: (path: string, form: Record<string, string>, headers?: Record<string, string>) =>
      request('POST', path, { csrf, ...form }, headers),
    get csrf() {
      return csrf;
    },
    get cookie() {
      return cookie;
    },
  };
}

async function signedIn(key: 'reviewer' | 'admin' = 'reviewer') {
  const context = await testApp();
  const user = browser(context.app);
  const form = await user.get('/ui/sign-in');
  expect(form.status).toBe(200);
  const signIn = await user.post('/ui/sign-in', { key: context.keys[key] });
  expect(signIn.status).toBe(303);
  return { ...context, user, signIn };
}

describe('web UI sign-in', () => {
  it('sends an anonymous visitor to sign in', async () => {
    const { app } = await testApp();
    const response = await app.request('/ui/approvals', { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/ui/sign-in');
  });

  it('signs a reviewer in with an HttpOnly, SameSite=Strict session cookie that holds no key', async () => {
    const { signIn, keys, user } = await signedIn();
    expect(signIn.setCookie).toMatch(
      /^callgate_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    expect(signIn.setCookie).not.toContain(keys.reviewer.slice(3, 20));
    const inbox = await user.get('/ui/approvals');
    expect(inbox.status).toBe(200);
    expect(inbox.text).toContain('reviewer-1');
    expect(inbox.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('refuses agent keys, wrong keys and forms without the CSRF token', async () => {
    const { app, keys } = await testApp();
    const user = browser(app);
    await user.get('/ui/sign-in');
    expect((await user.post('/ui/sign-in', { key: keys.agent })).status).toBe(403);
    expect((await user.post('/ui/sign-in', { key: 'cg_wrong' })).status).toBe(401);
    expect((await user.post('/ui/sign-in', { key: keys.reviewer, csrf: 'forged' })).status).toBe(403);
    expect(
      (await user.post('/ui/sign-in', { key: keys.reviewer }, { origin: 'https://evil.example' })).status,
    ).toBe(403);
    const stranger = browser(app);
    expect((await stranger.request('POST', '/ui/sign-in', { key: keys.reviewer })).status).toBe(403);
  });

  it('ends the session when the key is revoked, and on sign-out', async () => {
    const { user, engine } = await signedIn();
    await user.get('/ui/approvals');
    expect((await user.post('/ui/sign-out', {})).status).toBe(303);
    expect((await user.get('/ui/approvals')).status).toBe(302);
    const second = await signedIn();
    await second.engine.store.revokeApiKey('reviewer-1', Date.now());
    expect((await second.user.get('/ui/approvals')).status).toBe(302);
    expect(engine).toBeDefined();
  });
});

describe('web UI inbox and runs', () => {
  async function withPending() {
    const context = await signedIn();
    const { call, keys } = context;
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: {
        calls: [
          { id: 'pay', tool: 'send_invoice', arguments: { to: '<script>alert(1)</script>', amount: 5000 } },
        ],
      },
    });
    return {
      ...context,
      runId: run.json.run_id as string,
      approvalId: decided.json.verdicts[0].approval.id as string,
    };
  }

  it('shows a pending approval with its rule, reason and escaped arguments', async () => {
    const { user, approvalId } = await withPending();
    const list = await user.get('/ui/approvals/list');
    expect(list.text).toContain(approvalId);
    expect(list.text).toContain('large-invoices');
    expect(list.text).toContain('invoices over 1000 need a person');
    expect(list.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(list.text).not.toContain('<script>alert');
  });

  it('approves from the form, recording the signed-in key as reviewer', async () => {
    const { user, approvalId, engine } = await withPending();
    await user.get('/ui/approvals');
    const forged = await user.request('POST', `/ui/approvals/${approvalId}/answer`, {
      decision: 'approve',
      csrf: 'nope',
    });
    expect(forged.status).toBe(403);
    expect((await engine.store.getApproval(approvalId))?.status).toBe('pending');
    const answered = await user.post(`/ui/approvals/${approvalId}/answer`, {
      decision: 'approve',
      reason: 'looks right',
    });
    expect(answered.status).toBe(303);
    expect(await engine.store.getApproval(approvalId)).toMatchObject({
      status: 'approved',
      reviewer: 'reviewer-1',
      response_reason: 'looks right',
    });
    const page = await user.get('/ui/approvals');
    expect(page.text).toContain('send_invoice: approved (looks right)');
    const again = await user.post(`/ui/approvals/${approvalId}/answer`, { decision: 'deny' });
    expect(again.status).toBe(303);
    expect((await user.get('/ui/approvals')).text).toContain('no longer pending');
  });

  it('lists runs and shows a run’s timeline, verification status and bundle', async () => {
    const { user, runId, call, keys, approvalId } = await withPending();
    await call('POST', `/v1/approvals/${approvalId}/deny`, {
      key: keys.reviewer,
      body: { reason: 'too much' },
    });
    const runs = await user.get('/ui/runs');
    expect(runs.text).toContain(runId);
    for (const before of ['-0', '0x10', '1e3', '010', ' 5', '9007199254740992']) {
      const refused = await user.get(`/ui/runs?before=${encodeURIComponent(before)}`);
      expect(refused.status, before).toBe(400);
      expect(refused.text, before).toContain('query.before');
    }
    expect((await user.get(`/ui/runs?before=${Date.now() + 60_000}`)).text).toContain(runId);
    const page = await user.get(`/ui/runs/${runId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Verified');
    expect(page.text).toContain('large-invoices');
    expect(page.text).toContain('reviewer-1');
    expect(page.text).toContain('too much');
    const bundle = await user.get(`/ui/runs/${runId}/bundle`);
    expect(bundle.headers.get('content-disposition')).toMatch(/^attachment; filename="callgate-run-/);
    expect(JSON.parse(bundle.text).format).toBe('callgate-bundle/3');
    expect((await user.get('/ui/runs/nope')).status).toBe(404);
  });

  it('shows "—" for the step of every call in a run without model messages, and the steps once there are some', async () => {
    const { user, call, keys } = await signedIn();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'api' } });
    const runId = run.json.run_id;
    const decide = (body: unknown) => call('POST', `/v1/runs/${runId}/decisions`, { key: keys.agent, body });
    await decide({ calls: [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }] });
    await decide({ calls: [{ id: 'c2', tool: 'read_file', arguments: { path: 'b' } }] });
    const steps = async () =>
      [
        ...(await user.get(`/ui/runs/${runId}/timeline`)).text.matchAll(/<td class="step">([^<]*)<\/td>/g),
      ].map((match) => match[1]);
    expect(await steps()).toEqual(['—', '—']);
    await decide({
      message: { role: 'assistant', content: 'reading c' },
      calls: [{ id: 'c3', tool: 'read_file', arguments: { path: 'c' } }],
    });
    expect(await steps()).toEqual(['0', '0', '1']);
  });

  it('streams approval events to a signed-in browser', async () => {
    const { user, app, call, keys } = await signedIn();
    expect((await app.request('/ui/events')).status).toBe(401);
    const response = await app.request('/ui/events', { headers: { cookie: user.cookie } });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = '';
    const readUntil = async (text: string) => {
      while (!received.includes(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        received += decoder.decode(value);
      }
    };
    await readUntil('event: ready');
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'pay', tool: 'send_invoice', arguments: { to: 'x', amount: 5000 } }] },
    });
    await readUntil('event: approval');
    expect(received).toContain('"status":"pending"');
    await reader.cancel();
  });
});
