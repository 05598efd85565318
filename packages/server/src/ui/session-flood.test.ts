import { testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';
import { startServer } from '../start.js';
import { SessionStore } from './session.js';

async function signIn(url: string, key: string): Promise<{ status: number; cookie: string; text: string }> {
  const form = await fetch(`${url}/ui/sign-in`, { redirect: 'manual' });
  const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const response = await fetch(`${url}/ui/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, key }).toString(),
  });
  const set = response.headers.get('set-cookie');
  return {
    status: response.status,
    cookie: set ? (set.split(';')[0] ?? '') : cookie,
    text: await response.text(),
  };
}

describe('UI sessions under a flood', () => {
  it('10,000+ anonymous visitors to the sign-in page evict no signed-in session', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({ app, port: 0, signals: [] });
    try {
      const reviewer = await signIn(server.url, keys.reviewer);
      expect(reviewer.status).toBe(303);
      const inbox = () =>
        app.request('/ui/approvals', { redirect: 'manual', headers: { cookie: reviewer.cookie } });
      expect((await inbox()).status).toBe(200);
      // The flood goes through the app directly (no sockets): 10,500 sign-in pages, each minting
      // an anonymous session, more than the anonymous cap.
      for (let index = 0; index < 10_500; index += 1) {
        const page = await app.request('/ui/sign-in', { redirect: 'manual' });
        expect(page.status).toBe(200);
        await page.arrayBuffer();
      }
      expect((await inbox()).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('keeps anonymous and signed-in sessions under separate caps', () => {
    const sessions = new SessionStore({ clock: Date.now, maxSessions: 3, maxAnonymousSessions: 5 });
    const key = { name: 'r', role: 'reviewer', key_hash: 'h' } as never;
    const signedIn = [0, 1, 2].map(() => sessions.signIn(undefined, key));
    for (let index = 0; index < 100; index += 1) sessions.create();
    expect(sessions.size).toBe(8);
    for (const session of signedIn) expect(sessions.get(session.id)?.key).toBeDefined();
    const fourth = sessions.signIn(sessions.create(), key);
    expect(sessions.get(fourth.id)).toBeDefined();
    expect(sessions.signedInSize).toBe(3);
  });

  it('rate-limits sign-in attempts per address (429 with Retry-After), a right key included', async () => {
    const { app, keys } = await testApp();
    const server = await startServer({ app, port: 0, signals: [] });
    try {
      for (let index = 0; index < 10; index += 1) {
        expect((await signIn(server.url, 'cg_wrong_key')).status).toBe(401);
      }
      const limited = await signIn(server.url, keys.reviewer);
      expect(limited.status).toBe(429);
      expect(limited.text).toContain('Too many sign-in attempts from your address');
    } finally {
      await server.close();
    }
  });
});
