// A reviewer signed in to the web UI on one replica stays signed in when that replica is killed:
// the next page, the inbox's live updates and a form (CSRF) work on another, and signing out
// there ends the session everywhere. Real PostgreSQL, real `callgate serve` processes.
import { CallgateClient } from '@callgate/client';
import { describe, expect, it } from 'vitest';
import { testPostgresUrl } from '../../postgres/database.js';
import { deploymentPerSuite } from './harness.js';

const url = testPostgresUrl();

/** The `callgate_session` cookie a response set, as a Cookie header value. */
function sessionCookie(response: Response): string {
  const cookie = /callgate_session=[^;]+/.exec(response.headers.get('set-cookie') ?? '')?.[0];
  if (!cookie) throw new Error('no session cookie');
  return cookie;
}
const csrfOf = (page: string): string => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

describe.skipIf(url === undefined)('UI sessions across replicas', () => {
  const suite = deploymentPerSuite(url as string, () => ({
    count: 2,
    keys: { ana: 'reviewer', agent: 'agent' },
  }));

  it('survive the loss of the replica that signed the reviewer in', async () => {
    const [first, second] = suite.deployment.replicas;
    if (!first || !second) throw new Error('two replicas expected');
    const form = await fetch(`${first.url}/ui/sign-in`);
    const anonymous = sessionCookie(form);
    const signIn = await fetch(`${first.url}/ui/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: anonymous, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: csrfOf(await form.text()),
        key: suite.deployment.keys.ana ?? '',
      }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = sessionCookie(signIn);

    // The inbox on the other replica hears of an approval created on the first one (SSE).
    const events = new AbortController();
    const stream = await fetch(`${second.url}/ui/events`, { headers: { cookie }, signal: events.signal });
    expect(stream.status).toBe(200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const heard = (needle: string) =>
      (async () => {
        while (!text.includes(needle)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the event stream ended before ${needle}`);
          text += new TextDecoder().decode(value);
        }
      })();
    await heard('event: ready');
    const early = new CallgateClient({ url: first.url, apiKey: suite.deployment.keys.agent ?? '' });
    const earlyRun = await early.startRun({ framework: 'sessions' });
    const asked = await early.decide(earlyRun.run_id, [
      { id: 'early', tool: 'send_invoice', arguments: { to: 'acme', amount: 7000 } },
    ]);
    await heard(`"id":"${asked.verdicts[0]?.approval?.id}","status":"pending"`);
    events.abort();

    await first.kill();

    const inbox = await fetch(`${second.url}/ui/approvals`, { headers: { cookie }, redirect: 'manual' });
    expect(inbox.status).toBe(200);
    const page = await inbox.text();
    expect(page).toContain('ana');

    // A form posted to the survivor carries the session's CSRF token: an approval is answered.
    const agent = new CallgateClient({ url: second.url, apiKey: suite.deployment.keys.agent ?? '' });
    const run = await agent.startRun({ framework: 'sessions' });
    const { verdicts } = await agent.decide(run.run_id, [
      { id: 'pay', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } },
    ]);
    const approvalId = verdicts[0]?.approval?.id ?? '';
    const approve = await fetch(`${second.url}/ui/approvals/${approvalId}/answer`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: csrfOf(page),
        decision: 'approve',
        reason: 'from the survivor',
      }).toString(),
    });
    expect(approve.status).toBe(303);
    expect((await agent.getApproval(approvalId)).approval).toMatchObject({
      status: 'approved',
      reviewer: 'ana',
    });

    // Signing out on the survivor ends the session in the database too.
    const signOut = await fetch(`${second.url}/ui/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page) }).toString(),
    });
    expect(signOut.status).toBe(303);
    const after = await fetch(`${second.url}/ui/approvals`, { headers: { cookie }, redirect: 'manual' });
    expect(after.status).toBe(302);
  }, 60_000);
});
