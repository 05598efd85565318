import { html } from 'hono/html';
import { csrfField, type Markup } from './layout.js';
import type { Session } from './session.js';

/** The sign-in form: a reviewer or admin API key, never stored in the browser. */
export function signInContent(session: Session, error?: string): Markup {
  return html`<div class="card narrow">
    <h1>Sign in</h1>
    <p class="meta">Use a <strong>reviewer</strong> or <strong>admin</strong> API key (create one with
      <code>callgate keys create --role reviewer</code>). The key is checked once; the browser keeps only a session cookie.</p>
    ${error ? html`<div class="flash bad" role="alert">${error}</div>` : ''}
    <form method="post" action="/ui/sign-in" class="answer">
      ${csrfField(session)}
      <input type="password" name="key" autocomplete="off" placeholder="cg_…" aria-label="API key" required />
      <button type="submit" class="approve">Sign in</button>
    </form>
  </div>`;
}

/** A page's content for an error: what went wrong and where to go. */
export function errorContent(status: number, message: string): Markup {
  return html`<div class="card"><h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1><p>${message}</p>
    <p><a href="/ui/approvals">Back to approvals</a></p></div>`;
}
