// The web UI's only style sheet and script, served from /ui/assets/ (the Content-Security-Policy
// allows no inline script or style).
import { formatDuration } from '@callgate/core';

export const STYLE_SHEET = `
:root { color-scheme: light dark; --fg: #1d1f23; --muted: #667085; --bg: #f7f7f8; --card: #fff; --line: #e4e4e7;
  --ok: #0f7b3f; --bad: #b42318; --warn: #b54708; --accent: #3538cd; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e9; --muted: #9aa0aa; --bg: #141518; --card: #1c1d21; --line: #2e3036; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.5rem; align-items: center; padding: .8rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--card); }
header .brand { font-weight: 700; letter-spacing: .02em; }
header nav { display: flex; gap: 1rem; flex: 1; }
header a { color: var(--fg); text-decoration: none; }
header a[aria-current=page] { color: var(--accent); font-weight: 600; }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.35rem; margin: 0 0 1rem; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .6rem; }
code, pre { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .6rem; overflow: auto; max-height: 20rem; margin: .4rem 0; }
.card.narrow { max-width: 34rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.2rem; margin-bottom: 1rem; }
.meta { color: var(--muted); font-size: 13px; }
.row { display: flex; gap: 1rem; flex-wrap: wrap; align-items: baseline; }
.badge { display: inline-block; border-radius: 999px; padding: 0 .55rem; font-size: 12px; border: 1px solid currentColor; }
.ok, .allow, .approved, .completed { color: var(--ok); }
.bad, .deny, .denied, .refused, .error, .failed, .expired, .withdrawn { color: var(--bad); }
.ask, .pending, .running { color: var(--warn); }
form.answer { display: flex; gap: .5rem; margin-top: .6rem; flex-wrap: wrap; }
input[type=text], input[type=password] { font: inherit; padding: .4rem .6rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); min-width: 18rem; }
button { font: inherit; padding: .4rem .9rem; border-radius: 6px; border: 1px solid var(--line); background: var(--card); color: var(--fg); cursor: pointer; }
button.approve { background: var(--ok); border-color: var(--ok); color: #fff; }
button.deny { background: var(--bad); border-color: var(--bad); color: #fff; }
button.link { border: none; background: none; color: var(--muted); padding: 0; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 10px; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; font-size: 14px; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.flash { padding: .6rem 1rem; border-radius: 8px; margin-bottom: 1rem; border: 1px solid currentColor; }
.empty { color: var(--muted); padding: 1rem 0; }
.verify.ok { border-color: var(--ok); } .verify.bad { border-color: var(--bad); }
.flash.approved { color: #fff; background: var(--ok); border-color: var(--ok); }
.flash.denied { color: #fff; background: var(--bad); border-color: var(--bad); }
.flash.approved .mark, .flash.denied .mark { margin-right: .4rem; }
.badge.solid.approved { background: var(--ok); color: #fff; border-color: var(--ok); }
.badge.solid.denied { background: var(--bad); color: #fff; border-color: var(--bad); }
.badge.solid.expired, .badge.solid.withdrawn { border-style: dashed; }
.who .principal { color: var(--accent); }
p.source { margin: .6rem 0 0; }
.badge.injected { color: var(--accent); }
.injected pre { border-left: 3px solid var(--accent); }
code.label { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; font-size: 12px; }
.filters nav { gap: .5rem; margin-bottom: .4rem; }
a.filter { padding: .15rem .7rem; border: 1px solid var(--line); border-radius: 999px; text-decoration: none; color: var(--fg); text-transform: capitalize; }
td.nowrap { white-space: nowrap; }
a.filter[aria-current] { background: var(--accent); border-color: var(--accent); color: #fff; }
`;

export const SCRIPT = `
(() => {
  const body = document.body;
  const skew = Number(body.dataset.now || Date.now()) - Date.now();
  const formatDuration = ${formatDuration.toString()};
  const tick = () => {
    for (const element of document.querySelectorAll('[data-expires-at]')) {
      const left = Math.max(0, Number(element.dataset.expiresAt) - (Date.now() + skew));
      element.textContent = left === 0 ? 'expired' : formatDuration(Math.ceil(left / 1000) * 1000) + ' left';
    }
  };
  const refresh = async (target, url) => {
    try {
      const response = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } });
      if (response.status === 401) { location.href = '/ui/sign-in'; return; }
      if (response.ok) { target.innerHTML = await response.text(); tick(); }
    } catch {}
  };
  const live = document.querySelector('[data-live]');
  if (live) {
    const url = live.dataset.source;
    const events = new EventSource('/ui/events');
    events.addEventListener('approval', () => refresh(live, url));
    events.addEventListener('ready', () => refresh(live, url));
    if (live.dataset.poll) setInterval(() => refresh(live, url), Number(live.dataset.poll));
  }
  tick();
  setInterval(tick, 1000);
})();
`;
