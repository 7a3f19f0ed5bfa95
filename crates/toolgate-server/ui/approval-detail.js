// The inbox's detail pane on wide screens: everything about the selected
// approval (the one the keyboard or a click chose, else the most urgent)
// beside the list, so the list stays one scannable column of cards, each
// with its own Approve and Deny, while the pane shows the whole call, every
// finding, who asked and how, each vote and where the request was sent.
// On narrow screens the pane is hidden and each card shows all of it.

import { approvalCallText, groupFindings, showFlagged } from './approval-card.js';
import { prettyJson, requesterText, riskTag, shownWhole } from './calls.js';
import { $, h } from './dom.js';
import { time } from './format.js';

/** @import { ApprovalView } from './api.js' */

/**
 * Shows approval `a` (or nothing) in the pane.
 * @param {ApprovalView | null} a
 * @param {number} n identical calls it stands for
 */
export function renderDetail(a, n) {
  const pane = $('approval-detail');
  if (!a) {
    pane.replaceChildren();
    pane.dataset.shows = '';
    return;
  }
  pane.dataset.shows = a.id;
  const findings = Array.isArray(a.findings) ? a.findings : [];
  const cmd = h('pre', { class: 'cmd', 'aria-label': 'The call, whole' });
  showFlagged(cmd, approvalCallText(a), findings);
  const call = a.call || {};
  /** @type {Record<string, unknown>} */
  const params = /** @type {any} */ (call.params || {});
  const described = ['description', 'justification'].map((k) => params[k]).find((v) => typeof v === 'string' && v.trim());
  /** @type {Array<[string, unknown]>} */
  const fields = [
    ['asked by', requesterText(a.requester) || requesterText(call.requester)],
    ['described as', described ? shownWhole(String(described)) : null],
    ['agent', a.agent || call.agent],
    ['session', a.session || call.session],
    // A call that names no directory is judged as in an unknown one.
    ['cwd', (a.cwd || call.cwd) === '/(cwd unknown)' ? 'not sent by the agent (relative paths judged as unknown)' : a.cwd || call.cwd],
    ['created', a.created_ms ? time(a.created_ms) : null],
    ['expires', a.state === 'pending' && a.expires_ms ? time(a.expires_ms) : null],
    ['identical calls', n > 1 ? String(n) : null],
  ];
  pane.replaceChildren(h(
    'div',
    { class: 'detail-body' },
    h(
      'div',
      { class: 'detail-head' },
      riskTag(a.risk),
      h('span', { class: `badge badge-state ${a.state || ''}` }, a.state || '?'),
      h('a', { class: 'approval-id mono', href: `#approval/${a.id}`, title: 'A link to this approval' }, a.id),
    ),
    cmd,
    a.reason ? h('p', { class: 'approval-reason' }, a.reason) : null,
    findings.length
      ? h(
          'ul',
          { class: 'findings' },
          groupFindings(findings).map(({ f, n: times }) =>
            h(
              'li',
              { class: `finding ${f.verdict}` },
              riskTag(f.risk),
              h('span', { class: 'finding-layer' }, f.layer),
              h('span', null, shownWhole(f.reason)),
              times > 1 ? h('span', { class: 'finding-count' }, ` × ${times}`) : null,
            ),
          ),
        )
      : null,
    h(
      'dl',
      { class: 'approval-meta detail-meta' },
      fields.filter(([, v]) => v).map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, String(v)))),
    ),
    h(
      'div',
      { class: 'detail-votes small' },
      `${Number(a.have) || 0} of ${Number(a.need) || 1} approvals`,
      (a.votes || []).map((v) =>
        h(
          'div',
          { class: `vote ${v.approve ? 'yes' : 'no'}${v.current === false ? ' stale' : ''}` },
          `${v.approve ? '✓' : '✗'} ${v.identity || '?'}${v.channel ? ` via ${String(v.channel).split(' ')[0]}` : ''}${v.at_ms ? ` at ${time(v.at_ms)}` : ''}${v.reason ? `: “${v.reason}”` : ''}${v.current === false ? ' (stale)' : ''}`,
        ),
      ),
    ),
    (a.deliveries || []).length
      ? h(
          'p',
          { class: 'small muted' },
          'sent to: ',
          (a.deliveries || []).map((t) => `${t.name} (${(t.state && t.state.state) || 'pending'})`).join(' · '),
        )
      : null,
    h('details', { class: 'full-call', open: true }, h('summary', null, 'Full call (redacted JSON)'), h('pre', { class: 'json' }, prettyJson(a.call))),
  ));
}
