// The Decisions feed: the records held (first page at sign-in, live
// `decision` events batched per animation frame, older pages on request,
// the gap after a reconnect), the filters, and the table with its
// expandable detail rows.

import { api, messageOf, statusOf } from './api.js';
import { $, h } from './dom.js';
import { number, time } from './format.js';
import { MAX_RECORDS, PAGE, S, sameEpoch } from './state.js';
import { badge, holdBadge, isHold, prettyJson, riskTag, shownWhole, summarize } from './calls.js';

/** @import { DecisionRecord, DecisionsPage } from './api.js' */
/** @import { Cursor, Filters } from './state.js' */

/** @type {Filters} */
const UNFILTERED = { decision: '', tool: '', risk: '' };

// ---------------------------------------------------------------------------
// Data

/**
 * @param {Filters} f
 * @returns {string}
 */
function filterKey(f) {
  return [f.decision, f.tool.trim(), f.risk].join('|');
}

/**
 * @param {Filters} f
 * @returns {boolean}
 */
function hasFilters(f) {
  return !!(f.decision || f.tool.trim() || f.risk);
}

/**
 * The same test the daemon applies to `/v1/decisions` (every given field
 * must match exactly), so the live feed and older pages agree. The tool box
 * offers the tool names seen so far to make exact names easy to enter.
 * @param {DecisionRecord} r
 * @param {Filters} f
 * @returns {boolean}
 */
function matches(r, f) {
  if (f.decision && r.decision !== f.decision) return false;
  if (f.risk && r.risk !== f.risk) return false;
  const tool = f.tool.trim();
  if (tool && r.tool !== tool) return false;
  return true;
}

/**
 * @param {Filters} f
 * @param {number | null} [before]
 * @returns {string}
 */
function queryFor(f, before) {
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (f.decision) q.set('decision', f.decision);
  if (f.tool.trim()) q.set('tool', f.tool.trim());
  if (f.risk) q.set('risk', f.risk);
  if (before != null) q.set('before', String(before));
  return `v1/decisions?${q}`;
}

/**
 * Adds records; returns true if any was new. Keeps S.order newest first.
 * @param {DecisionRecord[] | undefined} list
 * @returns {boolean}
 */
function mergeRecords(list) {
  let added = false;
  for (const r of list || []) {
    if (!r || typeof r.seq !== 'number' || S.records.has(r.seq)) continue;
    S.records.set(r.seq, r);
    noteTool(r.tool);
    added = true;
  }
  if (added) {
    S.order = [...S.records.keys()].sort((a, b) => b - a);
    S.maxSeq = S.order.length ? S.order[0] : -1;
  }
  return added;
}

/**
 * The cursor for loading older entries under filter f. Unfiltered coverage
 * implies coverage for every filter, so the deeper of the two is used.
 * @param {Filters} f
 * @returns {Cursor | null}
 */
function cursorFor(f) {
  const key = filterKey(f);
  const cands = [S.cursors.get(filterKey(UNFILTERED))];
  if (hasFilters(f)) cands.push(S.cursors.get(key));
  const known = /** @type {Cursor[]} */ (cands.filter(Boolean));
  if (!known.length) return null;
  if (known.some((c) => c.done)) return { done: true };
  return { done: false, before: Math.min(...known.map((c) => /** @type {number} */ (c.before))) };
}

/**
 * @param {Filters} f
 * @param {number | null | undefined} nextBefore
 */
function setCursor(f, nextBefore) {
  S.cursors.set(filterKey(f), nextBefore == null ? { done: true } : { done: false, before: nextBefore });
}

/** The newest page, at sign-in. */
export async function loadInitialDecisions() {
  const done = sameEpoch((/** @type {DecisionsPage} */ res) => {
    mergeRecords(res.decisions);
    setCursor(UNFILTERED, res.next_before);
    renderFeed();
  });
  try {
    done(await api(queryFor(UNFILTERED)));
  } catch (e) {
    if (statusOf(e) !== 401) sameEpoch(() => setOlderNote(`Could not load decisions: ${messageOf(e)}`))();
  }
}

/** Loads one older page for the current filters, server-side filtered. */
async function loadOlder() {
  const f = { ...S.filters };
  const cursor = cursorFor(f);
  if (cursor && cursor.done) return;
  const btn = $('older-btn', HTMLButtonElement);
  btn.disabled = true;
  btn.textContent = 'Loading…';
  const apply = sameEpoch((/** @type {DecisionsPage} */ res) => {
    mergeRecords(res.decisions);
    setCursor(f, res.next_before);
    renderFeed();
  });
  try {
    apply(await api(queryFor(f, cursor ? cursor.before : null)));
  } catch (e) {
    if (statusOf(e) !== 401) sameEpoch(() => setOlderNote(`Could not load older decisions: ${messageOf(e)}`))();
  } finally {
    sameEpoch(renderOlderButton)();
  }
}

/**
 * After a reconnect, pages back until it meets a record it already holds.
 * If the gap is too large it starts over from the newest page rather than
 * show a feed with a silent hole in it.
 */
export async function catchUpDecisions() {
  const known = S.maxSeq;
  /** @type {DecisionRecord[]} */
  const collected = [];
  /** @type {number | null} */
  let before = null;
  /** @type {number | null | undefined} */
  let next = null;
  const epoch = S.epoch;
  try {
    for (let page = 0; page < 10; page++) {
      /** @type {DecisionsPage} */
      const res = await api(queryFor(UNFILTERED, before));
      if (epoch !== S.epoch) return;
      collected.push(...(res.decisions || []));
      next = res.next_before;
      const oldest = Math.min(...(res.decisions || []).map((r) => r.seq));
      if (known < 0 || next == null || !(oldest > known)) {
        mergeRecords(collected);
        if (known < 0) setCursor(UNFILTERED, next);
        renderFeed();
        return;
      }
      before = next;
    }
    // Still not joined up: replace what we hold with the fresh pages.
    S.records.clear();
    S.order = [];
    S.cursors.clear();
    S.expanded.clear();
    mergeRecords(collected);
    setCursor(UNFILTERED, next);
    renderFeed();
  } catch (e) {
    // The next reconnect or poll will try again.
  }
}

/**
 * A `decision` event: queued for the next animation frame.
 * @param {DecisionRecord & {type?: string}} msg
 */
export function onDecisionEvent(msg) {
  const { type, ...record } = msg;
  void type;
  if (typeof record.seq !== 'number' || S.records.has(record.seq)) return;
  noteTool(record.tool);
  S.pendingLive.push(record);
  // Animation frames do not run in a background tab, so the queue can grow
  // there for hours; only the newest MAX_RECORDS would be kept anyway.
  if (S.pendingLive.length > MAX_RECORDS) {
    S.pendingLive.splice(0, S.pendingLive.length - MAX_RECORDS);
    S.liveOverflow = true;
  }
  if (S.pendingLive.length === 1) requestAnimationFrame(flushLive);
}

/**
 * Adds the decisions that arrived since the last frame. Newer-than-all
 * records go on top without rebuilding the table; anything else (rare:
 * out-of-order delivery) triggers a full render.
 */
function flushLive() {
  const batch = S.pendingLive.sort((a, b) => a.seq - b.seq);
  S.pendingLive = [];
  if (!batch.length) return;
  if (S.liveOverflow) {
    // Some queued events were dropped: what we hold now starts at the
    // oldest one kept, and anything older is for "Load older" to fetch.
    S.liveOverflow = false;
    S.records.clear();
    S.cursors.clear();
    S.expanded.clear();
    mergeRecords(batch);
    setCursor(UNFILTERED, batch[0].seq);
    renderFeed();
    return;
  }
  const inOrder = batch[0].seq > S.maxSeq;
  for (const r of batch) S.records.set(r.seq, r);
  S.order = [...S.records.keys()].sort((a, b) => b - a);
  S.maxSeq = S.order[0];
  if (!inOrder) {
    renderFeed();
    return;
  }
  const scroller = $('feed-scroll');
  const body = $('feed-body');
  const beforeHeight = scroller.scrollHeight;
  const frag = document.createDocumentFragment();
  for (const r of batch.reverse()) {
    if (!matches(r, S.filters)) continue;
    frag.append(...recordRows(r, true));
  }
  body.prepend(frag);
  // Someone reading further down keeps their place while rows arrive on top.
  if (scroller.scrollTop > 0) scroller.scrollTop += scroller.scrollHeight - beforeHeight;
  trimRecords();
  renderFeedMeta();
}

/**
 * Drops the oldest records beyond MAX_RECORDS, but only while the operator
 * is at the top of the feed (not reading old entries they asked for).
 */
function trimRecords() {
  if (S.order.length <= MAX_RECORDS) return;
  // Someone reading old entries keeps them, up to a hard limit.
  if ($('feed-scroll').scrollTop > 40 && S.order.length <= 5 * MAX_RECORDS) return;
  const drop = S.order.splice(MAX_RECORDS);
  const many = drop.length > 200; // cheaper to rebuild the table than to find each row
  for (const seq of drop) {
    S.records.delete(seq);
    S.expanded.delete(seq);
    if (many) continue;
    const row = document.querySelector(`tr.row[data-seq="${seq}"]`);
    if (row) {
      if (row.nextElementSibling && row.nextElementSibling.classList.contains('detail')) row.nextElementSibling.remove();
      row.remove();
    }
  }
  // Everything from the new oldest record up is still held, for every filter.
  const floor = S.order[S.order.length - 1];
  for (const [key, c] of S.cursors) {
    if (c.done || c.before < floor) S.cursors.set(key, { done: false, before: floor });
  }
  const base = filterKey(UNFILTERED);
  if (!S.cursors.has(base)) S.cursors.set(base, { done: false, before: floor });
  if (many) renderFeed();
}

// ---------------------------------------------------------------------------
// Rendering

/**
 * The table row for one record, plus its detail row when expanded.
 * @param {DecisionRecord} r
 * @param {boolean} fresh just arrived (highlighted briefly)
 * @returns {HTMLElement[]}
 */
function recordRows(r, fresh) {
  const summary = summarize(r.call, r.tool, r.summary);
  const expanded = S.expanded.has(r.seq);
  const row = h(
    'tr',
    {
      class: `row${fresh ? ' fresh' : ''}`,
      tabindex: '0',
      'aria-expanded': String(expanded),
      dataset: { seq: String(r.seq), decision: String(r.decision || '') },
    },
    h('td', { class: 'time', title: r.ts || '' }, time(r.ts)),
    h(
      'td',
      null,
      isHold(r) ? holdBadge() : badge(r.decision),
      // A held call's approval: what became of it (the inbox card while it
      // waits, its record in Resolved after).
      r.decision === 'escalate' && typeof r.approval === 'string' && /^[0-9a-f]{32}$/.test(r.approval)
        ? h('a', {
            class: 'approval-link small',
            href: `#approval/${r.approval}`,
            title: 'What became of this request: its approval',
            'data-testid': `feed-approval-${r.approval}`,
            onclick: (/** @type {Event} */ ev) => ev.stopPropagation(),
          }, ' approval ›')
        : null,
    ),
    h('td', null, riskTag(r.risk)),
    h('td', { title: r.tool || '' }, r.tool || ''),
    h('td', { class: 'agent', title: [r.agent, r.session && `session ${r.session}`].filter(Boolean).join(' · ') }, shownWhole(r.agent || '–')),
    h('td', { class: 'call', title: summary }, summary),
    h('td', { class: 'layer' }, r.layer || ''),
    h('td', { class: 'reason', title: r.reason || '' }, r.reason || ''),
  );
  return expanded ? [row, detailRow(r)] : [row];
}

/**
 * @param {DecisionRecord} r
 * @returns {HTMLElement}
 */
function detailRow(r) {
  /** @type {Array<[string, unknown]>} */
  const fields = [
    ['seq', r.seq],
    ['time', r.ts],
    ['score', r.score],
    ['agent', r.agent],
    ['session', r.session],
    ['approval', r.approval],
    ['trace', r.trace],
  ];
  const meta = fields
    .filter(([, v]) => v != null && v !== '')
    .map(([k, v]) => h('span', null, `${k} `, h('b', null, String(v))));
  return h(
    'tr',
    { class: 'detail', dataset: { seq: String(r.seq) } },
    h(
      'td',
      { colspan: '8' },
      h('div', { class: 'detail-meta' }, meta),
      r.reason ? h('p', { class: 'detail-reason' }, r.reason) : null,
      h('pre', { class: 'json', 'aria-label': 'Redacted call' }, prettyJson(r.call)),
    ),
  );
}

/**
 * Opens or closes a row's detail.
 * @param {HTMLElement} row
 */
function toggleRow(row) {
  const seq = Number(row.dataset.seq);
  const r = S.records.get(seq);
  if (!r) return;
  const next = row.nextElementSibling;
  if (S.expanded.has(seq)) {
    S.expanded.delete(seq);
    if (next && next.classList.contains('detail')) next.remove();
    row.setAttribute('aria-expanded', 'false');
  } else {
    S.expanded.add(seq);
    row.after(detailRow(r));
    row.setAttribute('aria-expanded', 'true');
  }
}

/** Rebuilds the table from the records held, applying the filters. */
function renderFeed() {
  const frag = document.createDocumentFragment();
  for (const seq of S.order) {
    const r = /** @type {DecisionRecord} */ (S.records.get(seq));
    if (matches(r, S.filters)) frag.append(...recordRows(r, false));
  }
  $('feed-body').replaceChildren(frag);
  renderFeedMeta();
}

function renderFeedMeta() {
  const shown = $('feed-body').querySelectorAll('tr.row').length;
  const total = S.order.length;
  $('feed-empty').hidden = shown > 0;
  $('feed-empty').textContent = total ? 'No loaded decision matches the filters. Load older to search further back.' : 'No decisions yet.';
  $('feed-count').textContent = hasFilters(S.filters) ? `${number(shown)} of ${number(total)} loaded` : `${number(total)} loaded`;
  renderOlderButton();
}

function renderOlderButton() {
  const btn = $('older-btn', HTMLButtonElement);
  const cursor = cursorFor(S.filters);
  const done = cursor && cursor.done;
  btn.disabled = !!done || !cursor;
  btn.textContent = done ? 'No older entries' : hasFilters(S.filters) ? 'Load older matching' : 'Load older';
  setOlderNote(
    hasFilters(S.filters) && !done ? 'Filters apply to what is loaded; older pages are filtered by the daemon.' : '',
  );
}

/** @param {string} text */
function setOlderNote(text) {
  $('older-note').textContent = text;
}

/**
 * Offers a tool name in the filter box (the first 500 seen).
 * @param {string | undefined} tool
 */
function noteTool(tool) {
  if (typeof tool !== 'string' || !tool || S.tools.has(tool) || S.tools.size >= 500) return;
  S.tools.add(tool);
  $('tool-list').append(h('option', { value: tool }));
}

/** Takes the filters from the form into S. */
export function readFiltersFromForm() {
  S.filters = {
    decision: $('f-decision', HTMLSelectElement).value,
    tool: $('f-tool', HTMLInputElement).value,
    risk: $('f-risk', HTMLSelectElement).value,
  };
}

function onFiltersChanged() {
  readFiltersFromForm();
  renderFeed();
}

/** Empties the table and the tool names offered (signing out). */
export function clearFeed() {
  $('feed-body').replaceChildren();
  $('tool-list').replaceChildren();
}

/** The filter form, "Load older" and opening rows; once, at start. */
export function bindFeed() {
  $('older-btn').addEventListener('click', loadOlder);
  $('filters').addEventListener('submit', (ev) => ev.preventDefault());
  $('f-decision').addEventListener('change', onFiltersChanged);
  $('f-risk').addEventListener('change', onFiltersChanged);
  $('f-tool').addEventListener('input', onFiltersChanged);
  $('f-clear').addEventListener('click', () => {
    $('f-decision', HTMLSelectElement).value = '';
    $('f-risk', HTMLSelectElement).value = '';
    $('f-tool', HTMLInputElement).value = '';
    onFiltersChanged();
  });

  // One listener for every row, present and future.
  const body = $('feed-body');
  body.addEventListener('click', (ev) => {
    const row = /** @type {Element} */ (ev.target).closest('tr.row');
    if (row instanceof HTMLElement && !window.getSelection()?.toString()) toggleRow(row);
  });
  body.addEventListener('keydown', (ev) => {
    const row = /** @type {Element} */ (ev.target).closest('tr.row');
    if (row instanceof HTMLElement && (ev.key === 'Enter' || ev.key === ' ')) {
      ev.preventDefault();
      toggleRow(row);
    }
  });
}
