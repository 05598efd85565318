import { html } from 'hono/html';
import type { Session } from './session.js';

/** A piece of escaped HTML (every interpolated value is escaped by `html```). */
export type Markup = ReturnType<typeof html>;

/** Security headers of every UI page: no inline script or style, no framing, no referrer to other sites. */
export const UI_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const NAV = [
  { href: '/ui/approvals', label: 'Approvals' },
  { href: '/ui/approvals/history', label: 'History' },
  { href: '/ui/runs', label: 'Runs' },
] as const;

/** The banner after an action: an approval and a denial look different (colour, mark and words). */
function flashBanner(flash: { kind: string; message: string }): Markup {
  const style = { approved: 'approved', denied: 'denied', ok: 'ok' }[flash.kind] ?? 'bad';
  const mark = { approved: '✓ Approved', denied: '✗ Denied' }[flash.kind];
  return html`<div class="flash ${style}" role="status">${mark ? html`<strong class="mark">${mark}</strong> ` : ''}${flash.message}</div>`;
}

/** A time as local ISO-like text (UTC), for tables. */
export function timeText(epochMs: number | undefined): string {
  if (epochMs === undefined) return '';
  return new Date(epochMs)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** The hidden CSRF field every form carries. */
export function csrfField(session: Session): Markup {
  return html`<input type="hidden" name="csrf" value="${session.csrf}" />`;
}

/** A whole page: header with navigation and the signed-in key, a flash message, then `content`. */
export function page(options: {
  title: string;
  session?: Session;
  current?: string;
  now: number;
  content: Markup;
}): Markup {
  const { session } = options;
  const flash = session?.flash;
  if (session) delete session.flash;
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${options.title} · callgate</title>
    <link rel="stylesheet" href="/ui/assets/style.css" />
    <script src="/ui/assets/app.js" defer></script>
  </head>
  <body data-now="${options.now}">
    <header>
      <span class="brand">callgate</span>
      ${
        session?.key
          ? html`<nav>
              ${NAV.map(
                (item) =>
                  html`<a href="${item.href}" ${item.href === options.current ? html`aria-current="page"` : ''}>${item.label}</a>`,
              )}
            </nav>
            <span class="meta">signed in as <strong>${session.key.name}</strong> (${session.key.role})</span>
            <form method="post" action="/ui/sign-out">${csrfField(session)}<button class="link" type="submit">Sign out</button></form>`
          : html`<nav></nav>`
      }
    </header>
    <main>
      ${flash ? flashBanner(flash) : ''}
      ${options.content}
    </main>
  </body>
</html>`;
}
