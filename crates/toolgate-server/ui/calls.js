// How a call and its decision read on the page, shared by the feed and the
// approval cards: the one-line summary, the exact shell text, the decision
// badge and risk tag, and shownWhole(), which makes control and
// bidirectional characters an agent sent visible instead of letting them
// reorder or hide text.

import { h } from './dom.js';

/** @import { DecisionRecord, Requester, ToolCall } from './api.js' */

// The shell text of a call, as the agent sent it (approval cards show
// the exact call). What a call *does* comes from the server: each decision
// record's `summary` is computed by the gate from what it judged.
const COMMAND_KEYS = ['command', 'cmd', 'script', 'commandLine', 'command_line'];

/** @type {ReadonlySet<string>} */
export const DECISIONS = new Set(['allow', 'block', 'escalate']);

/**
 * A short form of a long hex hash: the first 10 and last 6 digits.
 * @param {string | undefined} hex
 * @returns {string}
 */
export function shortHash(hex) {
  if (typeof hex !== 'string' || hex.length <= 16) return hex || '';
  return `${hex.slice(0, 10)}…${hex.slice(-6)}`;
}

/**
 * POSIX shell quoting, as the gate joins an argv array.
 * @param {unknown} arg
 * @returns {string}
 */
function shellQuote(arg) {
  const s = String(arg);
  if (s !== '' && /^[A-Za-z0-9_\-./=:,+@%]+$/.test(s)) return s;
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/**
 * The decision as a coloured badge.
 * @param {string | undefined} decision
 * @returns {HTMLElement}
 */
export function badge(decision) {
  const d = decision && DECISIONS.has(decision) ? decision : 'state';
  return h('span', { class: `badge badge-${d}` }, decision || '?');
}

/**
 * A knowledge hold: the call waits until the agent acknowledges what it
 * was shown (a retry or `toolgate knowledge ack`); recorded as a block,
 * it is not a refusal, so it is not shown as one.
 * @param {DecisionRecord} r
 * @returns {boolean}
 */
export function isHold(r) {
  return r.outcome ? r.outcome === 'hold' : r.decision === 'block' && r.layer === 'knowledge';
}

/** @returns {HTMLElement} */
export function holdBadge() {
  return h('span', { class: 'badge badge-hold', title: 'Held until the agent acknowledges the knowledge it was shown' }, 'hold');
}

/**
 * The risk class as a tag, with its meaning as the title.
 * @param {string | undefined} risk
 * @returns {HTMLElement}
 */
export function riskTag(risk) {
  const r = risk && /^R[0-4]$/.test(risk) ? risk : '';
  return h('span', { class: `risk ${r ? 'risk-' + r : ''}`, title: riskTitle(r) }, risk || '–');
}

/** @type {Record<string, string>} */
const RISK_TITLES = {
  R0: 'R0: read only',
  R1: 'R1: local workspace change',
  R2: 'R2: external read or low-impact action',
  R3: 'R3: external change or irreversible effect',
  R4: 'R4: high impact',
};

/**
 * @param {string} r
 * @returns {string}
 */
function riskTitle(r) {
  return RISK_TITLES[r] || '';
}

/**
 * @param {unknown} value
 * @returns {string}
 */
export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/**
 * The shell text of a call, if it carries one.
 * @param {ToolCall | undefined} call
 * @returns {string | null}
 */
export function callCommand(call) {
  const params = (call && call.params) || {};
  for (const key of COMMAND_KEYS) {
    const v = params[key];
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v.map(shellQuote).join(' ');
  }
  return null;
}

/**
 * One line saying what the call does: the gate's own summary (the command,
 * or the tool and the path, URL or action it acts on), else, for records
 * written before summaries existed, the tool and its parameters, abridged.
 * @param {ToolCall | undefined} call
 * @param {string | undefined} tool
 * @param {string | null | undefined} summary
 * @returns {string}
 */
export function summarize(call, tool, summary) {
  if (typeof summary === 'string' && summary) return summary;
  tool = tool || (call && call.tool) || '?';
  const cmd = callCommand(call);
  if (cmd != null) return cmd;
  const params = (call && call.params) || {};
  const text = Object.keys(params).length ? JSON.stringify(params) : '';
  return text.length > 160 ? `${tool} ${text.slice(0, 157)}…` : `${tool} ${text}`.trim();
}

/**
 * A requester may be a plain id (ApprovalView) or {id, role} (ToolCall).
 * @param {Requester | string | null | undefined} r
 * @returns {string | null}
 */
export function requesterText(r) {
  if (r == null) return null;
  if (typeof r === 'string') return r;
  if (typeof r === 'object') return [r.id, r.role && `(${r.role})`].filter(Boolean).join(' ') || null;
  return String(r);
}

/**
 * Control characters (but newline and tab) and bidirectional-text
 * controls as visible escapes: text an agent chose must not reorder or
 * hide part of what the operator approves.
 * @param {unknown} text
 * @returns {string}
 */
export function shownWhole(text) {
  return String(text).replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u{${/** @type {number} */ (c.codePointAt(0)).toString(16)}}`,
  );
}
