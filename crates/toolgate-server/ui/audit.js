// The audit chain: GET /v1/audit/verify at start, every minute and on
// "Re-check", shown in the Audit chain card and its summary tile.

import { api, messageOf, statusOf } from './api.js';
import { $, h } from './dom.js';
import { number, time } from './format.js';
import { S } from './state.js';
import { shortHash } from './calls.js';

/** @import { AuditVerify } from './api.js' */

/** Asks the daemon to verify the chain and shows what it says. */
export async function verifyAudit() {
  const btn = $('audit-btn', HTMLButtonElement);
  btn.disabled = true;
  btn.textContent = 'Checking…';
  const epoch = S.epoch;
  try {
    /** @type {AuditVerify} */
    const res = await api('v1/audit/verify');
    if (epoch === S.epoch) renderAudit(res, null);
  } catch (e) {
    if (epoch === S.epoch && statusOf(e) !== 401) renderAudit(null, e);
  } finally {
    if (epoch === S.epoch) {
      btn.disabled = false;
      btn.textContent = 'Re-check';
    }
  }
}

/**
 * @param {AuditVerify | null} res
 * @param {unknown} error what the check failed with, if it did
 */
function renderAudit(res, error) {
  const body = $('audit-body');
  const tile = $('t-audit');
  const checked = `checked ${time(Date.now())}`;
  if (error) {
    body.replaceChildren(h('p', { class: 'audit-status bad' }, 'Could not verify'), h('p', { class: 'audit-detail' }, messageOf(error)));
    tile.textContent = 'unknown';
    tile.className = 'tile-value';
    return;
  }
  if (res && res.ok) {
    body.dataset.ok = 'true';
    body.replaceChildren(
      h('p', { class: 'audit-status ok' }, '✓ Chain intact'),
      h(
        'p',
        { class: 'audit-detail' },
        h('b', null, number(res.entries)),
        res.entries === 1 ? ' entry · head ' : ' entries · head ',
        h('b', { title: res.head_hash || '' }, shortHash(res.head_hash)),
        res.head_seq != null ? ` (seq ${res.head_seq})` : '',
        ` · ${checked}`,
      ),
    );
    tile.textContent = '✓ intact';
    tile.className = 'tile-value ok';
  } else {
    body.dataset.ok = 'false';
    body.replaceChildren(
      h('p', { class: 'audit-status bad' }, `✗ Chain broken at seq ${res && res.seq != null ? res.seq : '?'}`),
      h('p', { class: 'audit-detail' }, (res && res.why) || 'no reason given', ` · ${checked}`),
    );
    tile.textContent = `✗ broken @${res && res.seq != null ? res.seq : '?'}`;
    tile.className = 'tile-value bad';
  }
}
