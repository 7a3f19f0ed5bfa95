// The summary tiles that count decisions: the totals over the whole audit
// log, whichever process decided (from /v1/state, then each second's stats
// event) and the last minute's
// rate and p99 peak (from the charts' series). The pending and audit tiles
// belong to approvals.js and audit.js.

import { $ } from './dom.js';
import { micros, number } from './format.js';
import { S } from './state.js';

/** The allowed, held, escalated and blocked totals. */
export function renderTotals() {
  $('t-allow').textContent = number(S.totals.allow);
  $('t-hold').textContent = number(S.totals.hold);
  $('t-block').textContent = number(S.totals.block);
  $('t-escalate').textContent = number(S.totals.escalate);
}

/** The tiles derived from the last minute of buckets. */
export function renderRates() {
  let checks = 0;
  let p99 = 0;
  for (let t = S.latestT - 59; t <= S.latestT; t++) {
    const b = S.series.get(t);
    if (!b) continue;
    checks += (b.allow || 0) + (b.hold || 0) + (b.block || 0) + (b.escalate || 0);
    if (b.p99_us !== undefined && b.p99_us > p99) p99 = b.p99_us;
  }
  $('t-rate').textContent = S.latestT ? number(checks) : '–';
  $('t-p99').textContent = S.latestT ? micros(p99) : '–';
}
