// The Resolved view: what became of each approval once people (or time)
// had their say — approved and used, approved and waiting for the retry,
// denied with the reason, expired, or pushed through by an emergency
// bypass — with who voted, when, through which channel, and the call as
// the requester described it. Read from GET /v1/approvals?all=true (the
// store keeps every approval), filterable, and linkable: #resolved opens
// it, #approval/<id> shows that approval even after it left the inbox.

import { api, messageOf, statusOf } from './api.js';
import { approvalCallText } from './approval-card.js';
import { requesterText, riskTag } from './calls.js';
import { $, h } from './dom.js';
import { time } from './format.js';
import { S } from './state.js';

/** @import { ApprovalView, Vote } from './api.js' */

/** Most approvals the view reads at once. */
const LIMIT = 300;

/** @type {ApprovalView[]} newest first */
let resolved = [];
/** The approval a #approval/<id> link asked for, when it is not in `resolved`. */
/** @type {ApprovalView | null} */
let linked = null;
let inFlight = false;

/**
 * What an approval came to, in the view's words.
 * @param {ApprovalView} a
 * @returns {'used' | 'approved' | 'denied' | 'expired' | 'bypassed' | 'pending'}
 */
export function outcomeOf(a) {
  const votes = Array.isArray(a.votes) ? a.votes : [];
  const bypassed = votes.some((v) => v.approve && v.channel === 'bypass');
  if ((a.state === 'consumed' || a.state === 'approved') && bypassed) return 'bypassed';
  if (a.state === 'consumed') return 'used';
  if (a.state === 'approved' || a.state === 'denied' || a.state === 'expired') return a.state;
  return 'pending';
}

/** @type {Record<string, string>} */
const OUTCOME_WORDS = {
  used: 'approved · used',
  approved: 'approved · waiting for the retry',
  denied: 'denied',
  expired: 'expired',
  bypassed: 'bypassed',
  pending: 'pending',
};

/** Binds the tabs, the filters and the #resolved link; once, at start. */
export function bindResolved() {
  $('tab-pending').addEventListener('click', () => showTab('pending', true));
  $('tab-resolved').addEventListener('click', () => showTab('resolved', true));
  $('r-outcome').addEventListener('change', render);
  $('r-text').addEventListener('input', render);
  $('resolved-filters').addEventListener('submit', (ev) => ev.preventDefault());
  window.addEventListener('hashchange', followHash);
}

/** Shows the tab the address asks for (#resolved, or a closed #approval/<id>). */
export function followHash() {
  if (location.hash === '#resolved') {
    showTab('resolved', false);
    return;
  }
  const m = /^#approval\/([0-9a-f]{32})$/.exec(location.hash);
  if (!m) return;
  const open = S.approvals.some((a) => a.id === m[1]);
  if (open) {
    showTab('pending', false);
    return;
  }
  showApproval(m[1]);
}

/**
 * Selects a tab; `remember` puts it in the address, so it can be linked.
 * @param {'pending' | 'resolved'} which
 * @param {boolean} remember
 */
function showTab(which, remember) {
  const resolvedTab = which === 'resolved';
  $('tab-pending').setAttribute('aria-selected', String(!resolvedTab));
  $('tab-resolved').setAttribute('aria-selected', String(resolvedTab));
  $('pending-pane').hidden = resolvedTab;
  $('resolved-pane').hidden = !resolvedTab;
  if (remember) {
    const want = resolvedTab ? '#resolved' : '';
    if (location.hash !== want) history.replaceState(null, '', want || location.pathname + location.search);
  }
  if (resolvedTab) refreshResolved();
}

/** Whether the Resolved tab is the one shown. */
export function resolvedShown() {
  return !$('resolved-pane').hidden;
}

/**
 * Opens one approval's record in the Resolved tab (a stable page for a
 * request that has left the inbox).
 * @param {string} id
 */
async function showApproval(id) {
  showTab('resolved', false);
  try {
    /** @type {ApprovalView | null} */
    const a = await api(`v1/approvals/${encodeURIComponent(id)}`);
    linked = a && a.id ? a : null;
  } catch (e) {
    if (statusOf(e) === 401) return;
    linked = null;
    $('resolved-error').hidden = false;
    $('resolved-error').textContent = statusOf(e) === 404 ? `No approval ${id} is on record.` : `Could not read approval ${id}: ${messageOf(e)}`;
  }
  render();
}

/** GET /v1/approvals?all=true, keeping the ones that are no longer pending. */
export async function refreshResolved() {
  if (!S.signedIn || inFlight) return;
  inFlight = true;
  const epoch = S.epoch;
  try {
    /** @type {{approvals?: ApprovalView[]} | null} */
    const res = await api(`v1/approvals?all=true&limit=${LIMIT}`);
    if (epoch !== S.epoch) return;
    resolved = ((res && res.approvals) || []).filter((a) => a && a.state !== 'pending');
    resolved.sort((x, y) => (y.resolved_ms || y.created_ms || 0) - (x.resolved_ms || x.created_ms || 0));
    $('resolved-error').hidden = true;
    render();
  } catch (e) {
    if (epoch !== S.epoch || statusOf(e) === 401) return;
    $('resolved-error').hidden = false;
    $('resolved-error').textContent = `Could not load resolved approvals: ${messageOf(e)}`;
  } finally {
    inFlight = false;
  }
}

function render() {
  const want = /** @type {HTMLSelectElement} */ ($('r-outcome')).value;
  const text = /** @type {HTMLInputElement} */ ($('r-text')).value.trim().toLowerCase();
  const shown = linked && !resolved.some((a) => a.id === linked?.id) ? [linked, ...resolved] : resolved;
  const items = shown.filter((a) => (!want || outcomeOf(a) === want) && (!text || searchable(a).includes(text)));
  const linkedId = /^#approval\/([0-9a-f]{32})$/.exec(location.hash)?.[1];
  $('resolved-list').replaceChildren(...items.map((a) => item(a, a.id === linkedId)));
  $('resolved-empty').hidden = items.length > 0;
  $('resolved-empty').textContent = shown.length ? 'Nothing resolved matches the filter.' : 'No approval has been resolved yet.';
  const el = linkedId && document.querySelector(`[data-testid="resolved-${linkedId}"]`);
  if (el) el.scrollIntoView({ block: 'nearest' });
}

/**
 * The text the search box looks in.
 * @param {ApprovalView} a
 * @returns {string}
 */
function searchable(a) {
  const votes = (a.votes || []).map((v) => `${v.identity || ''} ${v.reason || ''} ${v.channel || ''}`).join(' ');
  return `${approvalCallText(a)} ${a.reason || ''} ${a.resolution || ''} ${votes} ${requesterText(a.requester) || ''} ${a.agent || ''}`.toLowerCase();
}

/**
 * One resolved approval.
 * @param {ApprovalView} a
 * @param {boolean} isLinked
 * @returns {HTMLElement}
 */
function item(a, isLinked) {
  const outcome = outcomeOf(a);
  const when = a.resolved_ms || a.created_ms;
  const description = describedAs(a);
  return h(
    'li',
    { class: `resolved ${outcome}${isLinked ? ' linked' : ''}`, 'data-testid': `resolved-${a.id}`, dataset: { outcome } },
    h(
      'div',
      { class: 'resolved-head' },
      h('span', { class: `badge badge-state badge-outcome ${outcome}` }, OUTCOME_WORDS[outcome] || outcome),
      riskTag(a.risk),
      h('span', { class: 'small muted' }, when ? time(when) : ''),
      h('a', { class: 'approval-id mono', href: `#approval/${a.id}`, title: 'A link to this approval' }, a.id.slice(0, 12)),
    ),
    h('pre', { class: 'resolved-call' }, approvalCallText(a)),
    description ? h('p', { class: 'resolved-who' }, 'described as: ', h('b', null, description)) : null,
    h('p', { class: 'resolved-who', 'data-testid': `resolved-who-${a.id}` }, ...whoSaid(a)),
    a.reason ? h('p', { class: 'resolved-who' }, `held because: ${a.reason}`) : null,
  );
}

/**
 * The requester's own words for the call, where the runtime sends them
 * (Claude Code's `description`, an MCP client's `reason`).
 * @param {ApprovalView} a
 * @returns {string}
 */
function describedAs(a) {
  const params = (a.call && a.call.params) || {};
  /** @type {Record<string, unknown>} */
  const p = /** @type {any} */ (params);
  for (const k of ['description', 'justification', 'reason']) {
    if (typeof p[k] === 'string' && p[k].trim()) return String(p[k]).slice(0, 300);
  }
  return '';
}

/**
 * Who decided, when and through which channel, with their reasons; who
 * asked.
 * @param {ApprovalView} a
 * @returns {Array<string | Node>}
 */
function whoSaid(a) {
  /** @type {Array<string | Node>} */
  const parts = [];
  const votes = (a.votes || []).filter((v) => v.current !== false);
  for (const v of votes) parts.push(...vote(v), ' · ');
  if (!votes.length) {
    parts.push(a.state === 'expired' ? 'nobody voted before it expired' : a.resolution || 'no vote on record');
    parts.push(' · ');
  } else if (a.state === 'expired') {
    parts.push(`expired with ${a.have || 0} of ${a.need || 1} approvals · `);
  }
  if (a.state === 'consumed') parts.push('the agent ran it · ');
  const asked = requesterText(a.requester) || a.agent;
  parts.push(`asked by ${asked || 'an unnamed requester'}${a.created_ms ? ` at ${time(a.created_ms)}` : ''}`);
  return parts;
}

/**
 * One vote: "approved by alice (ui) at 12:01:02: reason".
 * @param {Vote} v
 * @returns {Array<string | Node>}
 */
function vote(v) {
  const verb = v.channel === 'bypass' ? 'bypassed by' : v.approve ? 'approved by' : 'denied by';
  const via = v.channel ? ` (${String(v.channel).split(' ')[0]})` : v.kind ? ` (${v.kind})` : '';
  const at = v.at_ms ? ` at ${time(v.at_ms)}` : '';
  const why = v.reason ? `: “${v.reason}”` : '';
  return [`${verb} `, h('b', null, v.identity || '?'), `${via}${at}${why}`];
}
