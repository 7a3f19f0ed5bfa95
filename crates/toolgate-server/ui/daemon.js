// The daemon as a whole: GET /v1/state (polled, and re-read after policy
// events), the Daemon card, the policy reload toasts, the emergency-bypass
// banner, and handing the state on to the tiles, the charts' series and
// the side panels (panels.js).

import { api } from './api.js';
import { seedSeries } from './charts.js';
import { $, h } from './dom.js';
import { ago, duration, number, time } from './format.js';
import { render as renderPanels } from './panels.js';
import { S, pendingCount } from './state.js';
import { shortHash } from './calls.js';
import { renderTotals } from './tiles.js';
import { dismissToasts, toast } from './toasts.js';

/** @import { Bypass, DaemonState } from './api.js' */

/**
 * A `policy` event on /ws.
 * @typedef {Object} PolicyEvent
 * @property {'policy'} type
 * @property {'reloaded' | 'rejected' | string} [event]
 * @property {string} [origin]
 * @property {string | null} [error]
 */

/**
 * A policy reload or rejection: a toast, and the state read again.
 * @param {PolicyEvent} msg
 */
export function onPolicyEvent(msg) {
  const origin = msg.origin || '';
  if (msg.event === 'reloaded') {
    // A good reload clears any earlier rejection.
    dismissToasts('policy-rejected');
    toast('ok', 'Policy reloaded', origin, 6000, `policy-reloaded|${origin}`);
  } else if (msg.event === 'rejected') {
    // Stays until dismissed: the daemon keeps running the previous policy.
    const body = `${origin ? origin + '\n' : ''}${msg.error || 'no error given'}\nThe previous policy stays in force.`;
    toast('error', 'Policy change rejected', body, 0, `policy-rejected|${origin}|${msg.error}`);
  } else {
    toast('info', `Policy ${msg.event || 'event'}`, origin, 6000, `policy-${msg.event}|${origin}`);
  }
  // A burst of policy events needs one re-read of the state, not one each.
  // A throttle, not a debounce: a steady stream must not postpone it forever.
  if (!S.stateDebounce) {
    S.stateDebounce = setTimeout(() => {
      S.stateDebounce = 0;
      loadState();
    }, 300);
  }
}

/** GET /v1/state, applied if the session is still the same. */
export async function loadState() {
  const epoch = S.epoch;
  try {
    /** @type {DaemonState} */
    const st = await api('v1/state');
    if (epoch === S.epoch) applyState(st);
  } catch (e) {
    // Shown by the connection indicator and the next poll; 401 signs out.
  }
}

/**
 * The emergency bypasses in force: a banner for as long as one lasts,
 * saying which layers are lifted, by whom, until when and why.
 * @param {Bypass[] | undefined} active
 */
export function renderBypasses(active) {
  const el = $('bypass-banner');
  const list = Array.isArray(active) ? active : [];
  el.hidden = list.length === 0;
  el.replaceChildren(
    ...(list.length ? [h('div', null, `Emergency bypass in force (${list.length})`)] : []),
    ...list.map((b) =>
      h('p', null, `${(b.layers || []).join(', ')} lifted by ${b.by} until ${time(b.until_ms)}: ${b.reason}`),
    ),
  );
}

/**
 * A fresh GET /v1/state body: the totals, the series, the bypasses, the
 * Daemon card and the side panels.
 * @param {DaemonState | null} st
 */
export function applyState(st) {
  if (!st) return;
  S.server = st;
  S.serverAt = Date.now();
  if (st.totals) {
    S.totals = { allow: st.totals.allow || 0, hold: st.totals.hold || 0, block: st.totals.block || 0, escalate: st.totals.escalate || 0 };
    // The totals include the second still open when they were read (the
    // one after the newest closed bucket), partly. Counting stats buckets
    // only after it keeps the tiles from ever counting a check twice; the
    // next poll catches up on the rest.
    const closed = Array.isArray(st.series) && st.series.length ? st.series[st.series.length - 1].t : null;
    S.totalsFrom = closed != null ? closed + 2 : Math.floor(Date.now() / 1000) + 1;
  }
  if (st.version) $('version').textContent = `v${st.version}`;
  if (Array.isArray(st.series)) seedSeries(st.series);
  if (Array.isArray(st.bypasses)) renderBypasses(st.bypasses);
  renderTotals();
  renderStateList();
  renderAlerts(st);
  renderPanels(st, $('panels'));
  if (!S.approvalsLoaded) $('t-pending').textContent = number(pendingCount());
}

/**
 * What needs a person's attention, above everything: a policy reload the
 * daemon rejected (the old policy is still in force), and an approval
 * channel that is not ready (requests are not reaching it).
 * @param {DaemonState} st
 */
function renderAlerts(st) {
  /** @type {HTMLElement[]} */
  const lines = [];
  const p = st.policy || {};
  if (p.last_error) {
    lines.push(h('p', { 'data-testid': 'alert-policy' }, h('b', null, 'The policy file was rejected on reload; the previous policy stays in force. '), String(p.last_error)));
  }
  for (const t of (st.routing && st.routing.targets) || []) {
    if (t.ready) continue;
    lines.push(h('p', { 'data-testid': 'alert-channel' }, h('b', null, `Approval channel ${t.name || '?'} (${t.kind || '?'}) is not ready: `), t.error || 'no reason given', '. Requests are not reaching it; see docs/channels.md.'));
  }
  const el = $('alert-banner');
  el.hidden = lines.length === 0;
  el.replaceChildren(...lines);
}

/** The Daemon card, and the policy error above it. */
export function renderStateList() {
  const st = S.server;
  if (!st) return;
  const p = st.policy || {};
  const err = $('policy-error');
  err.hidden = !p.last_error;
  err.textContent = p.last_error ? `Last policy reload failed (the previous policy stays in force):\n${p.last_error}` : '';
  const watched = p.watched || [];
  const unwatched = (p.sources || []).filter((f) => !watched.includes(f));
  const watching = [...watched, ...unwatched.map((f) => `${f} (not watched: reload with SIGHUP)`)];
  /** @type {Array<[string, unknown, boolean?, string?]>} label, value, monospace, id */
  const all = [
    ['Policy', (p.sources || []).length === 0 ? 'the built-in default policy (no policy file: `toolgate policy init` writes it out to edit)' : p.origin, true],
    ['Watching', watching.length ? watching.join('\n') : null, true],
    ['Loaded', p.loaded ? `${time(p.loaded)} (${ago(p.loaded)}), ${number(p.reloads || 0)} reload${p.reloads === 1 ? '' : 's'}` : null],
    ['Store', st.store, true],
    ['Listening', st.listen, true],
    ['Started', st.started ? time(st.started) : null],
    ['Uptime', uptimeText(), false, 'uptime'],
    ['Pending', number(pendingCount())],
    ['Audit log', st.audit ? `${number(st.audit.length)} entries, head ${shortHash(st.audit.head_hash)}` : null, true],
    ['Version', st.version],
  ];
  const rows = all.filter(([, v]) => v != null && v !== '');
  const list = $('state-list');
  list.replaceChildren(
    ...rows.flatMap(([k, v, mono, id]) => [
      h('dt', null, k),
      h('dd', { class: mono ? 'mono' : null, id: id ? `state-${id}` : null, title: String(v) }, String(v)),
    ]),
  );
}

/** @returns {string | null} the daemon's uptime, ticking on locally between polls */
function uptimeText() {
  const st = S.server;
  if (!st || typeof st.uptime_s !== 'number') return null;
  return duration(st.uptime_s * 1000 + (Date.now() - S.serverAt));
}

/** Once a second: the Uptime row. */
export function renderUptime() {
  const el = document.getElementById('state-uptime');
  const text = uptimeText();
  if (el && text) el.textContent = text;
}
