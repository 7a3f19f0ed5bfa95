// One approval's card in the inbox: the exact call with the flagged
// sub-commands marked, the findings, who asked, the votes so far, where the
// request was sent, its deadline and the Approve / Deny controls. Built
// once per approval and then updated in place, so a reason being typed,
// focus and an open "full call" survive every refresh.

import { h } from './dom.js';
import { clock, time } from './format.js';
import { S } from './state.js';
import { callCommand, prettyJson, requesterText, riskTag, shownWhole } from './calls.js';

/** @import { ApprovalView, Delivery, Finding } from './api.js' */

const URGENT_MS = 30000;

/**
 * @typedef {Object} CardRefs
 * @property {HTMLElement} risk
 * @property {HTMLElement} state
 * @property {HTMLElement} countdown
 * @property {HTMLElement} waiting
 * @property {HTMLElement} count
 * @property {HTMLElement} members
 * @property {HTMLElement} cmd
 * @property {HTMLElement} reason
 * @property {HTMLElement} findings
 * @property {HTMLElement} meta
 * @property {HTMLElement} votes
 * @property {HTMLElement} deliveries
 * @property {HTMLElement} json
 * @property {HTMLInputElement} input
 * @property {HTMLButtonElement} approve
 * @property {HTMLButtonElement} deny
 * @property {HTMLElement} actions
 * @property {HTMLElement} confirm
 * @property {HTMLElement} confirmText
 * @property {HTMLButtonElement} confirmYes
 * @property {HTMLButtonElement} confirmNo
 * @property {HTMLElement} msg
 */

/**
 * `confirming`: the vote waiting for its confirmation (true approve, false
 * deny), or null.
 * @typedef {{el: HTMLElement, refs: CardRefs, busy: boolean, confirming: boolean | null}} Card
 */

/**
 * Whether an agent is waiting on this approval right now.
 * @param {ApprovalView} a
 * @returns {boolean}
 */
export function agentWaiting(a) {
  return a.state === 'pending' && typeof a.waiting_until_ms === 'number' && a.waiting_until_ms > Date.now();
}

/**
 * A new card for approval `a`; its buttons call onVote(id, approve,
 * confirmed), `confirmed` true from the confirm bar's button, and a click
 * elsewhere on it calls onSelect(id).
 * @param {ApprovalView} a
 * @param {(id: string, approve: boolean, confirmed: boolean) => void} onVote
 * @param {(id: string) => void} onSelect
 * @returns {Card}
 */
export function buildApprovalCard(a, onVote, onSelect) {
  const id = a.id;
  const input = /** @type {HTMLInputElement} */ (h('input', {
    type: 'text',
    placeholder: 'Reason (optional)',
    'aria-label': `Reason for ${id}`,
    maxlength: '500',
    onkeydown: (/** @type {KeyboardEvent} */ ev) => {
      if (ev.key === 'Enter') ev.preventDefault();
    },
  }));
  const approve = /** @type {HTMLButtonElement} */ (h('button', {
    type: 'button',
    class: 'btn btn-sm btn-approve',
    'aria-label': `Approve ${id}`,
    'data-testid': `approve-${id}`,
    onclick: () => onVote(id, true, false),
  }, 'Approve'));
  const deny = /** @type {HTMLButtonElement} */ (h('button', {
    type: 'button',
    class: 'btn btn-sm btn-deny',
    'aria-label': `Deny ${id}`,
    'data-testid': `deny-${id}`,
    onclick: () => onVote(id, false, false),
  }, 'Deny'));
  const confirmYes = /** @type {HTMLButtonElement} */ (h('button', {
    type: 'button',
    class: 'btn btn-sm',
    'data-testid': `confirm-${id}`,
    onclick: () => card.confirming != null && onVote(id, card.confirming, true),
  }, 'Confirm'));
  const confirmNo = /** @type {HTMLButtonElement} */ (h('button', {
    type: 'button',
    class: 'btn btn-sm btn-ghost',
    'data-testid': `cancel-${id}`,
    onclick: () => cancelConfirm(card),
  }, 'Cancel'));
  const confirmText = h('span', { class: 'confirm-text' });
  /** @type {CardRefs} */
  const refs = {
    risk: h('span'),
    state: h('span', { class: 'badge badge-state' }),
    countdown: h('span', { class: 'countdown' }),
    waiting: h('span', { class: 'badge badge-waiting', 'data-testid': `waiting-${id}`, hidden: true }),
    count: h('span', { class: 'badge badge-count', 'data-testid': `count-${id}`, hidden: true }),
    members: h('p', { class: 'approval-members small muted', hidden: true }),
    cmd: h('pre', { class: 'cmd', 'aria-label': 'Call to approve' }),
    reason: h('p', { class: 'approval-reason' }),
    findings: h('ul', { class: 'findings', 'data-testid': `findings-${id}`, hidden: true }),
    meta: h('dl', { class: 'approval-meta' }),
    votes: h('div', { class: 'votes' }),
    deliveries: h('div', { class: 'deliveries small muted', 'data-testid': `deliveries-${id}` }),
    json: h('pre', { class: 'json' }),
    input,
    approve,
    deny,
    actions: h('div', { class: 'actions' }, input, approve, deny),
    confirm: h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': 'Confirm your vote', 'data-testid': `confirm-bar-${id}`, hidden: true }, confirmText, confirmYes, confirmNo),
    confirmText,
    confirmYes,
    confirmNo,
    msg: h('p', { class: 'approval-msg', role: 'status', hidden: true }),
  };
  const el = h(
    'article',
    { class: 'approval new', 'data-testid': `approval-${id}`, dataset: { approvalId: id }, 'aria-label': `Approval ${id}` },
    h('div', { class: 'approval-head' }, refs.risk, refs.state, refs.count, refs.waiting, h('span', { class: 'approval-id mono', title: id }, id), refs.countdown),
    refs.cmd,
    refs.members,
    refs.reason,
    refs.findings,
    refs.meta,
    refs.votes,
    refs.deliveries,
    h('details', { class: 'full-call' }, h('summary', null, 'Full call (redacted JSON)'), refs.json),
    refs.actions,
    refs.confirm,
    refs.msg,
  );
  el.addEventListener('click', (ev) => {
    const t = /** @type {HTMLElement} */ (ev.target);
    if (t.closest('button, input, a, summary, details')) return;
    onSelect(id);
  });
  /** @type {Card} */
  const card = { el, refs, busy: false, confirming: null };
  return card;
}

/**
 * Asks the person to confirm a vote before it is cast: an R4 call, or a
 * vote from the keyboard (one stray key must not approve anything). The
 * confirm button takes the focus, so Enter confirms and Escape cancels.
 * @param {Card} card
 * @param {ApprovalView} a
 * @param {boolean} approve
 * @param {number} n identical calls the vote stands for
 */
export function askConfirm(card, a, approve, n) {
  card.confirming = approve;
  const what = n > 1 ? `these ${n} identical calls` : 'this call';
  const risk = a.risk === 'R4' ? ` It is ${a.risk}: the most dangerous class.` : '';
  card.refs.confirmText.textContent = `${approve ? 'Approve' : 'Deny'} ${what}?${risk}`;
  card.refs.confirmYes.textContent = approve ? 'Yes, approve' : 'Yes, deny';
  card.refs.confirmYes.className = `btn btn-sm ${approve ? 'btn-approve' : 'btn-deny'}`;
  card.refs.confirm.hidden = false;
  card.refs.confirmYes.focus();
}

/**
 * Drops a vote waiting for its confirmation.
 * @param {Card} card
 */
export function cancelConfirm(card) {
  card.confirming = null;
  card.refs.confirm.hidden = true;
}

/**
 * The current vote the signed-in person cast on `a`, if any.
 * @param {ApprovalView} a
 * @returns {import('./api.js').Vote | undefined}
 */
export function myVote(a) {
  if (!S.me) return undefined;
  return (a.votes || []).find((v) => v.current !== false && v.identity === S.me);
}

/**
 * The exact call, as the operator must see it before approving.
 * @param {ApprovalView} a
 * @returns {string}
 */
export function approvalCallText(a) {
  const call = a.call || {};
  const cmd = callCommand(call);
  if (cmd != null) return shownWhole(cmd);
  // Not a shell call: the tool and its full parameters, since any of them
  // (a message body, a URL) may be what matters.
  const params = call.params && Object.keys(call.params).length ? `\n${prettyJson(call.params)}` : '';
  return shownWhole(`${call.tool || a.summary || '?'}${params}`);
}

/**
 * Writes the call into `pre` with the sub-commands that findings name
 * marked, so the operator sees which part of a compound command (`ls &&
 * rm -rf ~`) triggered the hold. A finding's command is the analyzer's
 * reading (argument words, quotes removed); it is found in the text as
 * the same run of whitespace-separated words, quotes and shell
 * punctuation aside. What cannot be found is not marked.
 * @param {HTMLElement} pre
 * @param {string} text
 * @param {Finding[]} findings
 */
export function showFlagged(pre, text, findings) {
  // Each word with the offsets of its bare part (quotes and punctuation
  // at its edges are matched around, never marked).
  const tokens = [...text.matchAll(/\S+/g)].map((m) => {
    const lead = m[0].length - m[0].replace(LEADING_PUNCT, '').length;
    const trail = m[0].length - m[0].replace(TRAILING_PUNCT, '').length;
    const index = /** @type {number} */ (m.index);
    return { start: index + lead, end: index + m[0].length - trail, word: bare(m[0]) };
  });
  /** @type {Array<{start: number, end: number, title: string | undefined, risk: string | undefined}>} */
  const spans = [];
  for (const f of findings) {
    if (!f || typeof f.command !== 'string') continue;
    const words = f.command.split(/\s+/).map(bare).filter(Boolean);
    if (!words.length) continue;
    for (let i = 0; i + words.length <= tokens.length; i++) {
      if (words.every((w, k) => tokens[i + k].word === w)) {
        spans.push({ start: tokens[i].start, end: tokens[i + words.length - 1].end, title: f.reason, risk: f.risk });
        break;
      }
    }
  }
  spans.sort((x, y) => x.start - y.start);
  // A mark around the whole call says nothing: only a part is marked.
  const whole = spans.length === 1 && text.slice(0, spans[0].start).trim() === '' && text.slice(spans[0].end).trim() === '';
  if (whole) spans.length = 0;
  /** @type {Array<string | Node>} */
  const parts = [];
  let at = 0;
  for (const sp of spans) {
    if (sp.start < at) continue; // overlapping: the first one wins
    parts.push(text.slice(at, sp.start));
    parts.push(h('mark', { class: `flagged risk-${sp.risk || ''}`, title: sp.title || '' }, text.slice(sp.start, sp.end)));
    at = sp.end;
  }
  parts.push(text.slice(at));
  pre.replaceChildren(...parts);
}

const LEADING_PUNCT = /^[('"`{]+/;
const TRAILING_PUNCT = /[)'"`};&|]+$/;

/**
 * A word without the quotes and shell punctuation around it.
 * @param {string} word
 * @returns {string}
 */
function bare(word) {
  return String(word).replace(LEADING_PUNCT, '').replace(TRAILING_PUNCT, '');
}

/**
 * Brings a card up to date with `a` (and its group of identical calls).
 * @param {Card} card
 * @param {ApprovalView} a
 */
export function updateApprovalCard(card, a) {
  const { el, refs } = card;
  el.classList.toggle('approved', a.state === 'approved');
  refs.risk.replaceWith((refs.risk = riskTag(a.risk)));
  refs.state.textContent = a.state || '?';
  refs.state.className = `badge badge-state ${a.state || ''}`;
  const findings = Array.isArray(a.findings) ? a.findings : [];
  showFlagged(refs.cmd, approvalCallText(a), findings);
  refs.reason.textContent = a.reason || '';
  // Every finding, when there is more than the one the reason names; the
  // same finding made many times (one per file, per sub-command) is one
  // line with a count.
  const grouped = groupFindings(findings);
  refs.findings.hidden = findings.length < 2;
  refs.findings.replaceChildren(
    ...(findings.length < 2
      ? []
      : grouped.map(({ f, n }) =>
          h(
            'li',
            { class: `finding ${f.verdict}` },
            riskTag(f.risk),
            h('span', { class: 'finding-layer' }, f.layer),
            h('span', null, shownWhole(f.reason)),
            n > 1 ? h('span', { class: 'finding-count', title: `${n} identical findings` }, ` × ${n}`) : null,
          ),
        )),
  );
  refs.json.textContent = prettyJson(a.call);

  const call = a.call || {};
  /** @type {Array<[string, unknown]>} */
  const fields = [
    ['requester', requesterText(a.requester) || requesterText(call.requester)],
    ['agent', a.agent || call.agent],
    ['session', a.session || call.session],
    // The daemon judges a call that names no directory as in an unknown
    // one (paths/UNKNOWN_CWD), never in its own: say so in words.
    ['cwd', (a.cwd || call.cwd) === '/(cwd unknown)' ? 'not sent by the agent (relative paths judged as unknown)' : a.cwd || call.cwd],
    ['created', a.created_ms ? time(a.created_ms) : null],
  ];
  const meta = fields.filter(([, v]) => v);
  refs.meta.replaceChildren(...meta.map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, String(v)))));

  renderVotes(refs.votes, a);
  renderDeliveries(refs.deliveries, a.deliveries);

  // An agent waiting on it now (a `?wait`, or a hook holding through the daemon).
  refs.waiting.dataset.until = agentWaiting(a) ? String(a.waiting_until_ms) : '';

  // Deadline: a pending approval expires; an approved one must be used in its window.
  if (a.state === 'approved' && a.usable_until_ms) {
    refs.countdown.dataset.deadline = String(a.usable_until_ms);
    refs.countdown.dataset.label = 'usable for';
  } else if (a.expires_ms) {
    refs.countdown.dataset.deadline = String(a.expires_ms);
    refs.countdown.dataset.label = 'expires in';
  } else {
    delete refs.countdown.dataset.deadline;
  }

  const group = (S.groups && S.groups.get(a.id)) || [a.id];
  const n = group.length;
  refs.count.hidden = n < 2;
  refs.count.textContent = `× ${n}`;
  refs.count.title = `${n} identical calls, voted on together`;
  refs.members.hidden = n < 2;
  refs.members.textContent = n < 2 ? '' : `${n} identical calls are waiting (sessions: ${[
    ...new Set(group.map((gid) => {
      const g = S.approvals.find((x) => x.id === gid);
      return (g && (g.session || (g.call && g.call.session))) || '–';
    })),
  ].join(', ')}); Approve and Deny vote on all of them.`;
  refs.approve.textContent = card.busy ? refs.approve.textContent : n > 1 ? `Approve ${n}` : 'Approve';
  refs.deny.textContent = card.busy ? refs.deny.textContent : n > 1 ? `Deny ${n}` : 'Deny';

  const canVote = a.state === 'pending';
  const mine = canVote ? myVote(a) : undefined;
  refs.actions.hidden = !canVote;
  // One vote per person: after it, the buttons say so instead of
  // offering a second press the daemon would refuse.
  refs.approve.disabled = card.busy || !!mine;
  refs.deny.disabled = card.busy || !!mine;
  if (!canVote || mine) cancelConfirm(card);

  const msg = S.approvalMsgs.get(a.id);
  if (mine && !card.busy) {
    refs.msg.hidden = false;
    refs.msg.className = 'approval-msg ok';
    refs.msg.setAttribute('role', 'status');
    const have = Number(a.have) || 0;
    const need = Number(a.need) || 1;
    refs.msg.textContent = mine.approve
      ? `You approved${mine.reason ? ` (“${mine.reason}”)` : ''}: ${have} of ${need} approvals so far; waiting for ${need - have > 1 ? `${need - have} more people` : 'another person'}.`
      : 'You denied this call.';
  } else if (!msg && a.state === 'approved') {
    refs.msg.hidden = false;
    refs.msg.className = 'approval-msg ok';
    refs.msg.textContent = `Approved${a.resolution ? ` (${a.resolution})` : ''}: waiting for the agent to retry the call.`;
  } else {
    refs.msg.hidden = !msg;
    if (msg) {
      refs.msg.className = `approval-msg ${msg.kind}`;
      refs.msg.setAttribute('role', msg.kind === 'error' ? 'alert' : 'status');
      refs.msg.textContent = msg.text;
    }
  }
}

/**
 * Identical findings (same verdict, risk, layer and reason) as one, with
 * how many times each was made, in the order first seen.
 * @param {Finding[]} findings
 * @returns {Array<{f: Finding, n: number}>}
 */
export function groupFindings(findings) {
  /** @type {Map<string, {f: Finding, n: number}>} */
  const seen = new Map();
  for (const f of findings) {
    const key = JSON.stringify([f.verdict, f.risk, f.layer, f.reason]);
    const had = seen.get(key);
    if (had) had.n += 1;
    else seen.set(key, { f, n: 1 });
  }
  return [...seen.values()];
}

/**
 * The quorum as pips, and each vote cast.
 * @param {HTMLElement} el
 * @param {ApprovalView} a
 */
function renderVotes(el, a) {
  const have = Number(a.have) || 0;
  const need = Number(a.need) || (a.quorum && a.quorum.min_approvals) || 1;
  const pips = h('span', { class: 'pips', 'aria-hidden': 'true' });
  for (let i = 0; i < need; i++) pips.append(h('span', { class: `pip${i < have ? ' on' : ''}` }));
  const parts = [pips, h('span', null, `${have} of ${need} approval${need === 1 ? '' : 's'}`)];
  if (a.quorum && a.quorum.require_user) parts.push(h('span', null, '· a person must approve'));
  for (const v of a.votes || []) {
    const cls = `vote ${v.approve ? 'yes' : 'no'}${v.current === false ? ' stale' : ''}`;
    const title = [v.kind, v.channel, v.relayed ? 'relayed' : null, v.reason, v.current === false ? 'stale: cast on an earlier version' : null]
      .filter(Boolean)
      .join(' · ');
    const via = v.channel ? ` (${String(v.channel).split(' ')[0]})` : '';
    parts.push(h('span', { class: cls, title }, `${v.approve ? '✓' : '✗'} ${v.identity || '?'}${via}`));
  }
  el.replaceChildren(...parts);
}

/** @type {Record<string, string>} */
const DELIVERY_WORDS = { pending: 'sending', delivered: 'sent', retrying: 'retrying', failed: 'failed' };

/**
 * Where the request was sent (routing targets) and how each stands.
 * @param {HTMLElement} el
 * @param {Delivery[] | undefined} list
 */
function renderDeliveries(el, list) {
  const items = Array.isArray(list) ? list : [];
  el.hidden = items.length === 0;
  el.replaceChildren(
    ...(items.length ? ['sent to: '] : []),
    ...items.map((t, i) => {
      const st = (t.state && t.state.state) || 'pending';
      const err = t.state && t.state.error ? ` (${t.state.error})` : '';
      return h(
        'span',
        { class: `delivery ${st}`, title: `${t.kind} ${t.target}: ${st}, ${t.attempts} tr${t.attempts === 1 ? 'y' : 'ies'}${err}` },
        `${i ? ' · ' : ''}${t.name} ${DELIVERY_WORDS[st] || st}`,
      );
    }),
  );
}

/**
 * The card's "agent waiting" badge and its deadline countdown, as of `now`.
 * @param {Card} card
 * @param {number} now Unix ms
 */
export function updateCountdown(card, now) {
  const w = card.refs.waiting;
  const until = Number(w.dataset.until);
  const waitLeft = until ? until - now : 0;
  w.hidden = waitLeft <= 0;
  w.textContent = waitLeft > 0 ? `agent waiting — ${Math.ceil(waitLeft / 1000)} s left` : '';
  const el = card.refs.countdown;
  const deadline = Number(el.dataset.deadline);
  if (!deadline) {
    el.replaceChildren();
    return;
  }
  const left = deadline - now;
  el.classList.toggle('urgent', left < URGENT_MS);
  if (left <= 0) el.replaceChildren(h('b', null, 'expired'));
  else el.replaceChildren(`${el.dataset.label} `, h('b', null, clock(left)));
}
