import { readWholeNumber, truncateText } from '@callgate/core';
import { timelineOf, verifyBundle } from '@callgate/core/ledger';
import { CallgateError, isCallgateError } from '@callgate/protocol';
import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { streamSSE } from 'hono/streaming';
import { limitBody, readUtf8 } from '../http/body-limit.js';
import { httpStatusOf } from '../http/errors.js';
import { findApiKey } from '../keys.js';
import type { ServerContext } from '../server-context.js';
import { SCRIPT, STYLE_SHEET } from './assets.js';
import { clientAddress } from './client-address.js';
import { applyHistoryFilter, historyContent, historyFilter } from './history.js';
import { inboxContent, inboxList } from './inbox.js';
import { type Markup, page, UI_HEADERS } from './layout.js';
import { runContent, runsContent, timelineTable, type VerificationView } from './runs.js';
import { SESSION_COOKIE, type Session, type SessionStore } from './session.js';
import { errorContent, signInContent } from './sign-in.js';
import { SignInLimiter } from './sign-in-limit.js';

const FORM_LIMIT = 64 * 1024;
const HEARTBEAT_MS = 15_000;

/** True when the `Origin` header names the host the request was sent to. */
function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** The HTML error page for a failed UI request (status from the one kind → status mapping). */
export async function uiErrorResponse(
  c: Context,
  server: ServerContext,
  error: unknown,
  /** The status, when it is not the error kind's (413 for a form over the limit). */
  statusOverride?: number,
): Promise<Response> {
  const status = statusOverride ?? (isCallgateError(error) ? httpStatusOf(error.kind) : 500);
  const message = isCallgateError(error) ? error.message : 'the server failed to handle the request';
  if (!isCallgateError(error)) server.logger.error({ error: String(error) }, 'UI request failed');
  const response = await c.html(
    page({ title: 'Error', now: server.clock(), content: errorContent(status, message) }),
    status as 500,
  );
  for (const [name, value] of Object.entries(UI_HEADERS)) response.headers.set(name, value);
  return response;
}

/**
 * Mounts the web UI under `/ui`: sign-in, the approvals inbox (live over server-sent events),
 * runs and run timelines with verification status and bundle download. Every POST checks the
 * session's CSRF token and, when the browser sends one, the Origin.
 */
export function mountUi(app: Hono, server: ServerContext, sessions: SessionStore): void {
  const { engine } = server;

  const render = (
    c: Context,
    options: { title: string; session?: Session; current?: string; content: Markup },
    status = 200,
  ) => c.html(page({ ...options, now: server.clock() }), status as 200);

  function setSessionCookie(c: Context, session: Session): void {
    setCookie(c, SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: new URL(c.req.url).protocol === 'https:',
    });
  }

  /** The signed-in session whose key is still live, or undefined. */
  async function signedIn(c: Context): Promise<Session | undefined> {
    const session = sessions.get(getCookie(c, SESSION_COOKIE));
    if (!session?.key) return undefined;
    const row = await engine.store.getApiKey(session.key.key_hash);
    if (!row || row.revoked_at !== undefined || row.role === 'agent') {
      sessions.destroy(session.id);
      return undefined;
    }
    return session;
  }

  async function readForm(c: Context, session: Session | undefined): Promise<URLSearchParams> {
    // A browser names the page a form came from; it must be this server (same host and port).
    const origin = c.req.header('origin');
    if (origin !== undefined && !sameHost(origin, c.req.header('host'))) {
      throw new CallgateError('forbidden', 'the form was posted from another site');
    }
    const form = new URLSearchParams(await readUtf8(c.req.raw, FORM_LIMIT));
    if (!session || !sessions.checkCsrf(session, form.get('csrf'))) {
      throw new CallgateError(
        'forbidden',
        'the form’s security token is missing or stale; reload the page and try again',
      );
    }
    return form;
  }

  // Forms are small: a larger post is refused (413, the error page) before it is read.
  app.on(
    'POST',
    '/ui/*',
    limitBody(FORM_LIMIT, (c, error) => uiErrorResponse(c, server, error, 413)),
  );
  app.use('/ui/*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(UI_HEADERS)) c.res.headers.set(name, value);
  });

  app.get('/', (c) => c.redirect('/ui/approvals'));
  app.get('/ui', (c) => c.redirect('/ui/approvals'));
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('/ui/assets/style.css', (c) =>
    c.body(STYLE_SHEET, 200, { 'content-type': 'text/css; charset=utf-8' }),
  );
  app.get('/ui/assets/app.js', (c) =>
    c.body(SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
  );

  app.get('/ui/sign-in', async (c) => {
    const current = sessions.get(getCookie(c, SESSION_COOKIE));
    if (current?.key) return c.redirect('/ui/approvals');
    const session = current ?? sessions.create();
    setSessionCookie(c, session);
    return render(c, { title: 'Sign in', session, content: signInContent(session) });
  });

  const limiter = new SignInLimiter({ clock: server.clock });
  app.post('/ui/sign-in', async (c) => {
    const previous = sessions.get(getCookie(c, SESSION_COOKIE));
    const retryAfter = limiter.attempt(clientAddress(c));
    if (retryAfter !== undefined) {
      const message = `Too many sign-in attempts from your address; try again in ${retryAfter} s.`;
      const anonymous = previous ?? sessions.create();
      setSessionCookie(c, anonymous);
      c.header('Retry-After', String(retryAfter));
      return render(
        c,
        { title: 'Sign in', session: anonymous, content: signInContent(anonymous, message) },
        429,
      );
    }
    const form = await readForm(c, previous);
    const key = await findApiKey(engine.store, (form.get('key') ?? '').trim());
    const anonymous = previous as Session;
    if (!key)
      return render(
        c,
        { title: 'Sign in', session: anonymous, content: signInContent(anonymous, 'That key is not valid.') },
        401,
      );
    if (key.role === 'agent') {
      const message = 'Agent keys cannot answer approvals. Sign in with a reviewer or admin key.';
      return render(
        c,
        { title: 'Sign in', session: anonymous, content: signInContent(anonymous, message) },
        403,
      );
    }
    const session = sessions.signIn(previous, key);
    setSessionCookie(c, session);
    server.logger.info({ name: key.name }, 'signed in to the UI');
    return c.redirect('/ui/approvals', 303);
  });

  app.post('/ui/sign-out', async (c) => {
    const session = sessions.get(getCookie(c, SESSION_COOKIE));
    await readForm(c, session);
    if (session) sessions.destroy(session.id);
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.redirect('/ui/sign-in', 303);
  });

  // Everything below needs a signed-in reviewer or admin.
  const guard = async (c: Context): Promise<Session | Response> => {
    const session = await signedIn(c);
    if (session) return session;
    const wantsPage =
      c.req.method === 'GET' &&
      !c.req.path.endsWith('/list') &&
      !c.req.path.endsWith('/timeline') &&
      c.req.path !== '/ui/events';
    return wantsPage ? c.redirect('/ui/sign-in') : c.text('sign in first', 401);
  };

  /** The runs `approvals` belong to, by id: who asked (principal, framework, labels). */
  async function runsOf(approvals: readonly { run_id: string }[]) {
    const ids = [...new Set(approvals.map((approval) => approval.run_id))];
    const rows = await Promise.all(ids.map((id) => engine.store.getRun(id)));
    return new Map(rows.flatMap((row) => (row ? [[row.run_id, row] as const] : [])));
  }

  app.get('/ui/approvals', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    const approvals = await engine.listApprovals({ status: 'pending' });
    return render(c, {
      title: 'Approvals',
      session,
      current: '/ui/approvals',
      content: inboxContent(approvals, await runsOf(approvals), session, server.clock()),
    });
  });

  app.get('/ui/approvals/list', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    const approvals = await engine.listApprovals({ status: 'pending' });
    return c.html(inboxList(approvals, await runsOf(approvals), session, server.clock()));
  });

  app.get('/ui/approvals/history', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    const filter = historyFilter(c.req.query('status'), c.req.query('tool'));
    const listed = await engine.listApprovals(filter.status ? { status: filter.status } : {});
    const approvals = applyHistoryFilter(listed, filter).slice(0, 500);
    return render(c, {
      title: 'Approval history',
      session,
      current: '/ui/approvals/history',
      content: historyContent(approvals, await runsOf(approvals), filter),
    });
  });

  app.post('/ui/approvals/:id/answer', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    const form = await readForm(c, session);
    const decision = form.get('decision');
    if (decision !== 'approve' && decision !== 'deny')
      throw new CallgateError('request-invalid', 'decision must be approve or deny');
    const reason = truncateText((form.get('reason') ?? '').trim(), 2000);
    const id = c.req.param('id');
    try {
      const state = await engine.respondToApproval(id, {
        approved: decision === 'approve',
        reviewer: session.key?.name ?? 'unknown',
        ...(reason ? { reason } : {}),
      });
      const status = state.approval.status;
      session.flash = {
        kind: status === 'approved' ? 'approved' : status === 'denied' ? 'denied' : 'ok',
        message: `${state.approval.tool}: ${status}${reason ? ` (${reason})` : ''}`,
      };
    } catch (error) {
      if (!isCallgateError(error) || (error.kind !== 'conflict' && error.kind !== 'not-found')) throw error;
      session.flash = { kind: 'error', message: error.message };
    }
    return c.redirect('/ui/approvals', 303);
  });

  app.get('/ui/events', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    return streamSSE(c, async (stream) => {
      let closed = false;
      let wake: () => void = () => {};
      const finished = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const close = () => {
        closed = true;
        wake();
      };
      const unsubscribe = engine.onApproval((approval) => {
        if (closed) return;
        stream
          .writeSSE({
            event: 'approval',
            data: JSON.stringify({ id: approval.id, status: approval.status, run_id: approval.run_id }),
          })
          .catch(close);
      });
      stream.onAbort(close);
      server.lifecycle.signal.addEventListener('abort', close, { once: true });
      const heartbeat = setInterval(() => {
        stream.write(': keep-alive\n\n').catch(close);
      }, HEARTBEAT_MS);
      try {
        await stream.writeSSE({ event: 'ready', data: '{}' });
        await finished;
      } finally {
        clearInterval(heartbeat);
        unsubscribe();
        server.lifecycle.signal.removeEventListener('abort', close);
      }
    });
  });

  app.get('/ui/runs', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    // `before` (epoch ms, from the page's own "Older runs" link) is read as every whole number is.
    const beforeText = c.req.query('before');
    const before = beforeText === undefined ? undefined : readWholeNumber(beforeText, { minimum: 1 });
    if (before !== undefined && 'problem' in before)
      return uiErrorResponse(
        c,
        server,
        new CallgateError('request-invalid', `query.before: ${before.problem}`),
      );
    const pageSize = 50;
    const runs = await engine.store.listRuns({
      limit: pageSize,
      ...(before !== undefined ? { before: before.value } : {}),
    });
    const older = runs.length === pageSize ? runs.at(-1)?.started_at : undefined;
    return render(c, { title: 'Runs', session, current: '/ui/runs', content: runsContent(runs, older) });
  });

  async function runOr404(id: string) {
    const run = await engine.store.getRun(id);
    if (!run) throw new CallgateError('not-found', `no run ${id}`);
    return run;
  }

  app.get('/ui/runs/:id', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    const run = await engine.store.getRun(c.req.param('id'));
    if (!run) {
      const content = errorContent(404, `no run ${c.req.param('id')}`);
      return render(c, { title: 'Not found', session, current: '/ui/runs', content }, 404);
    }
    const entries = timelineOf(await engine.store.readRunRecords(run.run_id));
    let verification: VerificationView | { error: string };
    try {
      verification = verifyBundle(await engine.exportRun(run.run_id), { publicKey: server.publicKey });
    } catch (error) {
      verification = { error: error instanceof Error ? error.message : String(error) };
    }
    return render(c, {
      title: `Run ${run.run_id}`,
      session,
      current: '/ui/runs',
      content: runContent(run, entries, verification, server.publicKey),
    });
  });

  app.get('/ui/runs/:id/timeline', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    const run = await runOr404(c.req.param('id'));
    return c.html(timelineTable(timelineOf(await engine.store.readRunRecords(run.run_id))));
  });

  app.get('/ui/runs/:id/bundle', async (c) => {
    const session = await guard(c);
    if (session instanceof Response) return session;
    const run = await runOr404(c.req.param('id'));
    const bundle = await engine.exportRun(run.run_id);
    return c.body(`${JSON.stringify(bundle, null, 2)}\n`, 200, {
      'content-type': 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="callgate-run-${run.run_id.replace(/[^\w-]/g, '_')}.json"`,
    });
  });

  // Any other page under /ui: the not-found page in the same layout (with navigation when signed in).
  app.get('/ui/*', async (c) => {
    const session = await signedIn(c);
    const message = `there is no page ${c.req.path}`;
    return render(
      c,
      { title: 'Not found', ...(session ? { session } : {}), content: errorContent(404, message) },
      404,
    );
  });
}
