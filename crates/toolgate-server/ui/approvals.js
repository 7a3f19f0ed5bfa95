// The approvals inbox: GET /v1/approvals (polled, and re-read on approval
// events), most urgent first, identical calls grouped into one card,
// voting (buttons and the j / k / a / d keys), the inbox's place on the
// page, #approval/<id> deep links, and the pending count in the tile and
// the tab title. Each card itself is approval-card.js.

import { api, messageOf, statusOf } from './api.js';
import {
  agentWaiting,
  approvalCallText,
  askConfirm,
  buildApprovalCard,
  cancelConfirm,
  updateApprovalCard,
  updateCountdown,
} from './approval-card.js';
import { renderDetail } from './approval-detail.js';
import { renderStateList } from './daemon.js';
import { $ } from './dom.js';
import { number, time } from './format.js';
import { notifyNew } from './notify.js';
import { S, pendingCount } from './state.js';
import { followHash, refreshResolved, resolvedShown } from './resolved.js';

/** @import { ApprovalView, VoteResult } from './api.js' */
/** @import { Card } from './approval-card.js' */
/** @import { Message } from './state.js' */

/** @type {Map<string, Card>} approval id -> its card on the page */
const approvalCards = new Map();

/** An `approval` event on /ws: the list is read again, once per burst. */
export function onApprovalEvent() {
  // Any approval event may change the list; one re-fetch covers a burst.
  // (refreshApprovals itself queues one more run if a fetch is in flight.)
  if (!S.debounce) {
    S.debounce = setTimeout(() => {
      S.debounce = 0;
      refreshApprovals();
      if (resolvedShown()) refreshResolved();
    }, 80);
  }
}

/** GET /v1/approvals; overlapping calls collapse into one follow-up. */
export async function refreshApprovals() {
  if (!S.signedIn) return;
  if (S.approvalsInFlight) {
    S.approvalsAgain = true;
    return;
  }
  S.approvalsInFlight = true;
  const epoch = S.epoch;
  try {
    /** @type {{approvals?: ApprovalView[]} | null} */
    const res = await api('v1/approvals');
    if (epoch !== S.epoch) return;
    S.approvals = byUrgency((res && res.approvals) || []);
    notifyNew(S.approvals, S.approvalsLoaded);
    S.approvalsLoaded = true;
    $('approvals-error').hidden = true;
    renderApprovals();
  } catch (e) {
    if (epoch !== S.epoch || statusOf(e) === 401) return;
    $('approvals-error').hidden = false;
    $('approvals-error').textContent = `Could not load approvals: ${messageOf(e)}`;
  } finally {
    if (epoch === S.epoch) {
      S.approvalsInFlight = false;
      if (S.approvalsAgain) {
        S.approvalsAgain = false;
        refreshApprovals();
      }
    }
  }
}

/** @type {Record<string, number>} */
const RISK_RANK = { R4: 4, R3: 3, R2: 2, R1: 1, R0: 0 };

/**
 * Most urgent first: pending before approved (an approved call only waits
 * for the agent's retry), an agent waiting on it now, then the higher
 * risk, then the sooner expiry, then the older.
 * @param {ApprovalView[]} approvals
 * @returns {ApprovalView[]}
 */
function byUrgency(approvals) {
  /** @param {ApprovalView} a */
  const key = (a) => [
    a.state === 'pending' ? 0 : 1,
    agentWaiting(a) ? 0 : 1,
    -(RISK_RANK[a.risk ?? ''] ?? -1),
    a.state === 'pending' ? (a.expires_ms || Infinity) : (a.usable_until_ms || Infinity),
    a.created_ms || 0,
  ];
  return [...approvals].sort((x, y) => {
    const kx = key(x);
    const ky = key(y);
    for (let i = 0; i < kx.length; i++) {
      if (kx[i] !== ky[i]) return kx[i] < ky[i] ? -1 : 1;
    }
    return 0;
  });
}

/**
 * Keyboard: j / k move between approval cards, a approves and d denies
 * the focused one (with the reason typed in it) and moves on to the next,
 * Escape leaves the reason field. Ignored while typing anywhere else.
 * @type {string | null}
 */
let focusedApproval = null;

/** @param {string | null} id */
function focusApproval(id) {
  focusedApproval = id;
  for (const [cid, card] of approvalCards) card.el.classList.toggle('focused', cid === id);
  const card = id && approvalCards.get(id);
  if (card) card.el.scrollIntoView({ block: 'nearest' });
  showSelected();
}

/**
 * The detail pane (wide screens) shows the focused card's approval, else
 * the most urgent one; the list marks which.
 */
function showSelected() {
  const ids = S.approvals.map((a) => a.id).filter((id) => approvalCards.has(id));
  const id = focusedApproval && approvalCards.has(focusedApproval) ? focusedApproval : ids[0] || null;
  for (const [cid, card] of approvalCards) card.el.classList.toggle('selected', cid === id);
  const a = id ? S.approvals.find((x) => x.id === id) || null : null;
  renderDetail(a, id ? ((S.groups && S.groups.get(id)) || [id]).length : 0);
  $('inbox-split').classList.toggle('has-items', !!a);
}

/** The inbox's keys, and following #approval/<id> links; once, at start. */
export function bindApprovals() {
  document.addEventListener('keydown', (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = /** @type {HTMLElement | null} */ (ev.target);
    const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
    if (typing) {
      if (ev.key === 'Escape') t.blur();
      return;
    }
    if (ev.key === 'Escape') {
      for (const card of approvalCards.values()) cancelConfirm(card);
      return;
    }
    const ids = S.approvals.map((a) => a.id).filter((id) => approvalCards.has(id));
    if (!ids.length) return;
    const at = ids.indexOf(/** @type {string} */ (focusedApproval));
    if (ev.key === 'j') {
      focusApproval(ids[Math.min(at + 1, ids.length - 1)]);
    } else if (ev.key === 'k') {
      focusApproval(ids[Math.max(at - 1, 0)]);
    } else if ((ev.key === 'a' || ev.key === 'd') && at >= 0) {
      const a = S.approvals.find((x) => x.id === focusedApproval);
      if (!a || a.state !== 'pending') return;
      ev.preventDefault();
      // A key press only asks: the vote is cast from the confirm bar.
      askVote(a.id, ev.key === 'a', true);
    } else {
      return;
    }
    ev.preventDefault();
  });
  window.addEventListener('hashchange', () => {
    linkedShown = null;
    showLinkedApproval();
  });
}

/**
 * Updates the cards in place (keyed by id) so a reason being typed, focus
 * and an open "full call" survive the 5-second refresh.
 */
function renderApprovals() {
  const list = $('approval-list');
  const seen = new Set();
  /** @type {ChildNode | null} */
  let prev = null;
  groupIdentical();
  for (const a of S.approvals) {
    if (!a || !a.id || !S.groups.has(a.id)) continue;
    seen.add(a.id);
    let card = approvalCards.get(a.id);
    if (!card) {
      card = buildApprovalCard(
        a,
        (id, approve, confirmed) => (confirmed ? confirmedVote(id, approve) : askVote(id, approve, false)),
        focusApproval,
      );
      approvalCards.set(a.id, card);
    }
    updateApprovalCard(card, a);
    /** @type {ChildNode | null} */
    const want = prev ? prev.nextSibling : list.firstChild;
    if (want !== card.el) list.insertBefore(card.el, want);
    prev = card.el;
  }
  for (const [id, card] of approvalCards) {
    if (!seen.has(id)) {
      card.el.remove();
      approvalCards.delete(id);
      S.approvalMsgs.delete(id);
    }
  }
  const pending = /** @type {number} */ (pendingCount());
  placeInbox(pending > 0);
  $('approvals-empty').hidden = S.approvals.length > 0;
  const pill = $('approvals-count');
  pill.textContent = String(pending);
  pill.title = `${pending} waiting for a vote; ${S.approvals.length - pending} approved, waiting for the agent's retry`;
  pill.classList.toggle('active', pending > 0);
  $('t-pending').textContent = number(pending);
  renderStateList();
  $('tile-pending').classList.toggle('active', pending > 0);
  document.title = pending > 0 ? `(${pending}) toolgate` : 'toolgate';
  if (focusedApproval && !approvalCards.has(focusedApproval)) focusedApproval = null;
  showSelected();
  updateCountdowns();
  showLinkedApproval();
}

/**
 * The same call asked for again and again (an agent retrying, several
 * sessions doing the same thing) is one card with a count, voted on at
 * once: identical means the same state, risk, working directory, agent
 * and call, every field of it but the session and the requester. The most urgent of them leads; S.groups maps each
 * lead to every id in its group, S.leadOf each id to its lead.
 */
function groupIdentical() {
  S.groups = new Map();
  S.leadOf = new Map();
  /** @type {Map<string, string>} */
  const byKey = new Map();
  for (const a of S.approvals) {
    if (!a || !a.id) continue;
    const call = a.call || {};
    // The whole call but for who asked and from which session: identical
    // means one vote would mean the same thing for each of them.
    const { session: _s, requester: _r, ...same } = call;
    const key = a.state === 'pending'
      ? JSON.stringify([a.state, a.risk, a.cwd || '', a.agent || '', approvalCallText(a), same])
      : a.id; // approved calls each wait for their own retry
    const lead = byKey.get(key);
    if (lead) {
      /** @type {string[]} */ (S.groups.get(lead)).push(a.id);
      S.leadOf.set(a.id, lead);
    } else {
      byKey.set(key, a.id);
      S.groups.set(a.id, [a.id]);
      S.leadOf.set(a.id, a.id);
    }
  }
}

/**
 * The inbox always leads the main column (moving it made the page jump
 * when the last approval was handled); while anything waits for a person
 * its border says so.
 * @param {boolean} waiting
 */
function placeInbox(waiting) {
  const card = /** @type {HTMLElement} */ (document.querySelector('.approvals-card'));
  card.classList.toggle('inbox-main', waiting);
}

/**
 * A decision's approve_url ends in #approval/<id>: bring that card into
 * view once it is on the page, and mark it so the operator sees which.
 * @type {string | null}
 */
let linkedShown = null;
function showLinkedApproval() {
  const m = /^#approval\/([0-9a-f]{32})$/.exec(location.hash);
  const id = m ? (S.leadOf && S.leadOf.get(m[1])) || m[1] : null;
  for (const [cid, card] of approvalCards) card.el.classList.toggle('linked', cid === id);
  if (!id || linkedShown === id) return;
  const card = approvalCards.get(id);
  if (!card) {
    // Not waiting any more: its record is in the Resolved tab.
    if (S.approvalsLoaded) {
      linkedShown = id;
      followHash();
    }
    return;
  }
  linkedShown = id;
  card.el.scrollIntoView({ block: 'center', behavior: 'smooth' });
}

/**
 * A vote asked for by a button or a key: cast at once, unless the call is
 * R4 or the vote came from the keyboard, which ask to confirm first.
 * @param {string} id
 * @param {boolean} approve
 * @param {boolean} fromKey
 */
function askVote(id, approve, fromKey) {
  const card = approvalCards.get(id);
  const a = S.approvals.find((x) => x.id === id);
  if (!card || !a || card.busy) return;
  if (fromKey || a.risk === 'R4') {
    askConfirm(card, a, approve, ((S.groups && S.groups.get(id)) || [id]).length);
    return;
  }
  vote(id, approve);
}

/**
 * A confirmed vote: cast, and (like a mail inbox) the next card gets the
 * keyboard.
 * @param {string} id
 * @param {boolean} approve
 */
function confirmedVote(id, approve) {
  const card = approvalCards.get(id);
  if (card) cancelConfirm(card);
  const ids = S.approvals.map((a) => a.id).filter((x) => approvalCards.has(x));
  const at = ids.indexOf(id);
  const next = ids[at + 1] || ids[at - 1] || null;
  vote(id, approve);
  if (focusedApproval === id) focusApproval(next);
}

/**
 * Approve or deny, with an optional reason; the vote is the signed-in person's.
 * @param {string} id
 * @param {boolean} approve
 */
async function vote(id, approve) {
  const card = approvalCards.get(id);
  if (!card || card.busy) return;
  /** @type {{reason?: string}} */
  const body = {};
  const reason = card.refs.input.value.trim();
  if (reason) body.reason = reason;

  card.busy = true;
  card.refs.approve.disabled = true;
  card.refs.deny.disabled = true;
  (approve ? card.refs.approve : card.refs.deny).textContent = approve ? 'Approving…' : 'Denying…';
  const epoch = S.epoch;
  // A group card votes on every identical call it stands for, lead last
  // so the card's own message is the lead's.
  const group = ((S.groups && S.groups.get(id)) || [id]).filter((g) => g !== id).concat([id]);
  /** @type {Message | undefined} */
  let msg;
  try {
    /** @type {VoteResult | null} */
    let res = null;
    for (const gid of group) {
      res = await api(`v1/approvals/${encodeURIComponent(gid)}/${approve ? 'approve' : 'deny'}`, { method: 'POST', body });
      if (epoch !== S.epoch) return;
      if (res && res.approval) replaceApproval(res.approval);
    }
    msg = outcomeMessage(res);
    if (group.length > 1) msg = { ...msg, text: `${group.length} identical calls: ${msg.text}` };
    card.refs.input.value = '';
  } catch (e) {
    const status = statusOf(e);
    if (epoch !== S.epoch || status === 401) return;
    if (status === 409) msg = { kind: 'error', text: `Refused: ${messageOf(e)}` };
    else if (status === 404) msg = { kind: 'error', text: 'This approval no longer exists: it was used, expired or resolved elsewhere.' };
    else if (status === 403) msg = { kind: 'error', text: `Forbidden: ${messageOf(e)}` };
    else msg = { kind: 'error', text: `${approve ? 'Approve' : 'Deny'} failed: ${messageOf(e)}` };
  }
  card.busy = false;
  if (msg) S.approvalMsgs.set(id, msg);
  renderApprovals();
  refreshApprovals();
}

/**
 * What a vote's answer means, for the card.
 * @param {VoteResult | null} res
 * @returns {Message}
 */
function outcomeMessage(res) {
  const o = res && res.outcome;
  if (res && o === 'approved') {
    const until = res.usable_until_ms ? ` The agent may retry it until ${time(res.usable_until_ms)}.` : '';
    return { kind: 'ok', text: `Approved.${until}` };
  }
  if (res && o === 'recorded') return { kind: 'info', text: `Vote recorded: ${res.have} of ${res.need} approvals so far.` };
  if (o === 'denied') return { kind: 'info', text: 'Denied. The agent gets a block.' };
  return { kind: 'info', text: `Done (${o || 'no outcome given'}).` };
}

/**
 * Puts a vote's fresh view of an approval in the list (or drops it once closed).
 * @param {ApprovalView} view
 */
function replaceApproval(view) {
  const i = S.approvals.findIndex((a) => a.id === view.id);
  const open = view.state === 'pending' || view.state === 'approved';
  if (i >= 0) {
    if (open) S.approvals[i] = view;
    else S.approvals.splice(i, 1);
  }
  S.approvals = byUrgency(S.approvals);
}

/** Once a second: every card's countdowns. */
export function updateCountdowns() {
  const now = Date.now();
  for (const card of approvalCards.values()) updateCountdown(card, now);
}

/** Removes every card (signing out). */
export function clearApprovals() {
  $('approval-list').replaceChildren();
  approvalCards.clear();
  renderDetail(null, 0);
}
