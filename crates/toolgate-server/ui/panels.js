// The side panels fed by GET /v1/state: the knowledge layer, the
// integrations, the sandbox posture. daemon.js calls render(state,
// container) after every state poll.
//
// Every value shown comes from that state body (read.rs `state` and
// `knowledge_state`, canary.rs `Canaries::view`, core posture.rs `Posture`):
// nothing is estimated here. Text goes in with textContent only (an agent
// controls instance names, warning details and error texts), and there are
// no style attributes (the CSP allows only panels.css).
//
// Each render builds the panels afresh, then morphs the live DOM into them:
// nodes whose text did not change are not touched, rows are matched by key,
// so nothing flickers and focus, selection and scroll positions stay put.

import { h } from './dom.js';
import * as fmt from './format.js';

// The lookup-time histogram's bucket bounds in µs, as
// toolgate-gate/src/knowledge/stats.rs LOOKUP_BUCKETS_US (the last bucket
// holds anything slower). Shown only when the daemon sends as many buckets.
const LOOKUP_BUCKETS_US = [50, 100, 250, 500, 1000, 2000, 5000, 20000];

/** @type {HTMLElement|null} the container last rendered into */
let lastContainer = null;
/** @type {number} the interval that keeps "… ago" texts current */
let agoTimer = 0;

// ---------------------------------------------------------------------------
// DOM helpers

/**
 * Milliseconds since the epoch from Unix ms or an RFC 3339 string; NaN if neither.
 * @param {number|string|null|undefined} ts
 * @returns {number}
 */
function toMs(ts) {
  if (typeof ts === 'number') return ts;
  if (typeof ts === 'string') return Date.parse(ts);
  return NaN;
}

/**
 * "42s ago (14:03:12)": the "ago" part is kept current once a second.
 * @param {number|string|null|undefined} ts Unix ms or RFC 3339
 * @param {string} [testid]
 * @returns {HTMLElement}
 */
function when(ts, testid) {
  const ms = toMs(ts);
  if (!isFinite(ms)) return h('span', { testid }, '–');
  return h(
    'span',
    { class: 'pn-when', testid },
    h('span', { 'data-ago': ms }, fmt.ago(ms)),
    ` (${fmt.time(ms)})`,
  );
}

/**
 * A <dt>/<dd> pair for a .kv list.
 * @param {string} label
 * @param {Node|string} value
 * @param {string} [testid] on the <dd>
 * @param {string|null} [cls] on the <dd>
 * @returns {HTMLElement[]}
 */
function kv(label, value, testid, cls) {
  return [h('dt', null, label), h('dd', { testid, class: cls }, value)];
}

/**
 * A coloured status pill.
 * @param {'ok'|'warn'|'bad'|'off'} tone
 * @param {string} text
 * @param {string} [testid]
 * @returns {HTMLElement}
 */
function pill(tone, text, testid) {
  return h('span', { class: `pn-pill pn-${tone}`, testid, 'data-tone': tone }, text);
}

/**
 * A panel card with a heading and its body.
 * @param {string} key panel name, also data-testid `panel-<key>`
 * @param {string} title
 * @param {Array<Node|null|false>} headExtras shown after the title
 * @param {Array<Node|null|false>} body
 * @returns {HTMLElement}
 */
function card(key, title, headExtras, body) {
  const titleId = `panel-${key}-title`;
  return h(
    'section',
    { class: `card pn-card pn-card-${key}`, key, testid: `panel-${key}`, 'aria-labelledby': titleId },
    h('div', { class: 'card-head' }, h('h2', { id: titleId }, title), h('div', { class: 'topbar-spacer' }), headExtras),
    h('div', { class: 'pn-body' }, body),
  );
}

const numFmt = new Intl.NumberFormat();
/**
 * @param {*} n
 * @returns {string} the number with grouping, or "–" when it is not one
 */
const num = (n) => (typeof n === 'number' && isFinite(n) ? numFmt.format(n) : '–');

/**
 * A lookup time in µs. Sub-second times read like the check-latency chart
 * (µs, ms), since format.js duration() counts whole seconds; a second or
 * more goes through duration().
 * @param {number|undefined} us
 * @returns {string}
 */
function lookupTime(us) {
  if (!(typeof us === 'number' && isFinite(us) && us >= 0)) return '–';
  if (us >= 1e6) return fmt.duration(us / 1000);
  if (us < 1000) return `${Math.round(us)} µs`;
  return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
}

/**
 * @param {number} us a bucket bound
 * @returns {string}
 */
const boundText = (us) => (us >= 1000 ? `${us / 1000} ms` : `${us} µs`);

// ---------------------------------------------------------------------------
// Morphing: make `cur` look like `next`, touching only what differs

/**
 * @param {Node} node
 * @returns {string|undefined} its data-key, if it is an element with one
 */
const keyOf = (node) => (node.nodeType === 1 ? /** @type {HTMLElement} */ (node).dataset.key : undefined);

/**
 * Turns `cur` into `next`; returns the node now in the document.
 * @param {Node} cur
 * @param {Node} next
 * @returns {Node}
 */
function morph(cur, next) {
  if (cur.nodeType !== next.nodeType || cur.nodeName !== next.nodeName || keyOf(cur) !== keyOf(next)) {
    /** @type {ChildNode} */ (cur).replaceWith(next);
    return next;
  }
  if (cur.nodeType !== 1) {
    if (cur.nodeValue !== next.nodeValue) cur.nodeValue = next.nodeValue;
    return cur;
  }
  const a = /** @type {Element} */ (cur);
  const b = /** @type {Element} */ (next);
  for (const { name } of [...a.attributes]) if (!b.hasAttribute(name)) a.removeAttribute(name);
  for (const { name, value } of [...b.attributes]) if (a.getAttribute(name) !== value) a.setAttribute(name, value);
  morphChildren(a, b);
  return a;
}

/**
 * Makes `parent`'s children match `next`'s: keyed children by key,
 * the others by position.
 * @param {Element} parent
 * @param {Element} next
 */
function morphChildren(parent, next) {
  const wanted = [...next.childNodes];
  /** @type {Map<string, Node>} */
  const keyed = new Map();
  for (const c of parent.childNodes) {
    const k = keyOf(c);
    if (k) keyed.set(k, c);
  }
  let ref = parent.firstChild;
  for (const n of wanted) {
    const k = keyOf(n);
    let match = null;
    if (k) {
      match = keyed.get(k) || null;
      keyed.delete(k);
    } else if (ref && !keyOf(ref)) {
      match = ref;
    }
    if (match) {
      if (match !== ref) parent.insertBefore(match, ref);
      ref = morph(match, n).nextSibling;
    } else {
      parent.insertBefore(n, ref);
    }
  }
  while (ref) {
    const after = ref.nextSibling;
    parent.removeChild(ref);
    ref = after;
  }
}

// ---------------------------------------------------------------------------
// 1. Knowledge layer (read.rs knowledge_state)

/**
 * What each enforcement level does, in a few words.
 * @type {Record<string, string>}
 */
const ENFORCEMENT = {
  strict: 'holds a call until the agent acknowledges the knowledge shown',
  category: 'holds a call for knowledge in the blocking categories, shows the rest',
  advisory: 'shows knowledge with the decision, never holds a call',
  disabled: 'no lookups',
};

/**
 * @typedef {Object} KnowledgeStats
 * @property {number} [interceptions]
 * @property {number} [with_knowledge]
 * @property {number} [injections]
 * @property {number} [held]
 * @property {number} [acked_by_retry]
 * @property {number} [acked_explicitly]
 * @property {number} [ack_rate] acknowledged ÷ held, at most 1; 0 when nothing was held
 * @property {number} [source_errors]
 * @property {number} [failed_closed]
 * @property {number} [lookup_us_mean]
 * @property {number[]} [lookup_us_buckets]
 */

/**
 * @typedef {Object} KnowledgeState
 * @property {string} [status] ok | degraded | disabled
 * @property {string} [enforcement] strict | category | advisory | disabled
 * @property {boolean} [fail_open]
 * @property {string[]} [sop_dirs]
 * @property {number} [rules]
 * @property {{at: string, error: string}|null} [last_error]
 * @property {KnowledgeStats} [stats]
 */

/**
 * @param {KnowledgeState|undefined} k
 * @returns {HTMLElement}
 */
function knowledgePanel(k) {
  if (!k || typeof k !== 'object') {
    return card('knowledge', 'Knowledge layer', [], [
      h('p', { class: 'empty' }, 'This daemon did not report its knowledge layer.'),
    ]);
  }
  const status = typeof k.status === 'string' ? k.status : '';
  const failOpen = k.fail_open !== false;
  const tone = status === 'ok' ? 'ok' : status === 'degraded' ? (failOpen ? 'warn' : 'bad') : 'off';
  const s = k.stats || {};
  const held = typeof s.held === 'number' ? s.held : null;

  let statusLine = null;
  if (status === 'degraded') {
    statusLine = h(
      'p',
      { class: `pn-note pn-note-${tone}`, testid: 'knowledge-degraded' },
      failOpen
        ? 'A knowledge source failed in the last minute: calls go on without that knowledge (fail_open).'
        : 'A knowledge source failed in the last minute: calls that needed it are blocked (fail_open = false).',
    );
  } else if (status === 'disabled') {
    statusLine = h('p', { class: 'pn-note' }, 'The policy turns the knowledge layer off: nothing is looked up or shown.');
  }

  const ackText =
    held && held > 0 && typeof s.ack_rate === 'number' ? `${Math.round(s.ack_rate * 100)}%` : '–';
  const ackDetail =
    held && held > 0 ? ` (${num(s.acked_by_retry)} by retry, ${num(s.acked_explicitly)} by id, of ${num(held)} held)` : '';

  const lookups = typeof s.interceptions === 'number' ? s.interceptions : 0;
  const buckets = Array.isArray(s.lookup_us_buckets) ? s.lookup_us_buckets : [];
  const histogram =
    lookups > 0 && buckets.length === LOOKUP_BUCKETS_US.length + 1
      ? h(
          'ul',
          { class: 'pn-hist', testid: 'knowledge-lookup-buckets', 'aria-label': 'Lookups per time bucket' },
          buckets.map((n, i) =>
            n > 0
              ? h(
                  'li',
                  null,
                  i < LOOKUP_BUCKETS_US.length ? `≤ ${boundText(LOOKUP_BUCKETS_US[i])}: ` : `> ${boundText(LOOKUP_BUCKETS_US[i - 1])}: `,
                  h('b', null, num(n)),
                )
              : null,
          ),
        )
      : null;

  const dirs = Array.isArray(k.sop_dirs) ? k.sop_dirs : [];
  const err = k.last_error && typeof k.last_error === 'object' ? k.last_error : null;

  const rows = [
    ...kv(
      'Enforcement',
      h('span', null, h('b', null, k.enforcement || '–'), ENFORCEMENT[k.enforcement ?? ''] ? h('span', { class: 'muted' }, `: ${ENFORCEMENT[k.enforcement ?? '']}`) : null),
      'knowledge-enforcement',
    ),
    ...kv(
      'Interceptions',
      h('span', null, h('span', { testid: 'knowledge-interceptions' }, num(s.interceptions)), typeof s.with_knowledge === 'number' ? h('span', { class: 'muted' }, ` (${num(s.with_knowledge)} found knowledge)`) : null),
    ),
    ...kv('Holds', num(s.held), 'knowledge-holds'),
    ...kv('Acknowledged', h('span', null, h('span', { testid: 'knowledge-ack-rate' }, ackText), h('span', { class: 'muted' }, ackDetail))),
    ...kv(
      'Lookup time',
      h(
        'span',
        null,
        h('span', { testid: 'knowledge-lookup' }, lookups > 0 ? `${lookupTime(s.lookup_us_mean)} mean` : '–'),
        lookups > 0 ? h('span', { class: 'muted' }, ` over ${num(lookups)} lookup${lookups === 1 ? '' : 's'}`) : null,
        histogram,
      ),
    ),
    ...kv(
      'SOP dirs',
      dirs.length
        ? h('ul', { class: 'pn-plain mono', testid: 'knowledge-sop-dirs' }, dirs.map((d) => h('li', { key: `dir:${d}` }, String(d))))
        : h('span', { class: 'muted', testid: 'knowledge-sop-dirs' }, 'none configured'),
    ),
    ...kv(
      'Source errors',
      h(
        'span',
        null,
        h('span', { testid: 'knowledge-source-errors' }, num(s.source_errors)),
        typeof s.failed_closed === 'number' && s.failed_closed > 0 ? h('span', { class: 'muted' }, ` (${num(s.failed_closed)} calls blocked by them)`) : null,
        h('span', { class: 'muted' }, failOpen ? ' · fails open' : ' · fails closed'),
      ),
    ),
  ];

  const errBox = err
    ? h(
        'div',
        { class: status === 'degraded' ? 'pn-error pn-error-recent' : 'pn-error', testid: 'knowledge-last-error' },
        h('div', { class: 'pn-error-head' }, 'Last source error ', when(err.at, 'knowledge-last-error-at')),
        h('div', { class: 'pn-error-text mono' }, String(err.error ?? '')),
      )
    : null;

  return card('knowledge', 'Knowledge layer', [pill(tone, status || 'unknown', 'knowledge-status')], [
    statusLine,
    h('dl', { class: 'kv pn-kv' }, rows),
    errBox,
  ]);
}

// ---------------------------------------------------------------------------
// 2. Integrations (canary.rs Canaries::view)

/**
 * @typedef {Object} Integration
 * @property {string} runtime
 * @property {string} instance
 * @property {number|null} [started_ms]
 * @property {number|null} [first_activity_ms]
 * @property {number|null} [first_hook_ms]
 * @property {number|null} [last_hook_ms]
 * @property {number} [last_seen_ms]
 * @property {string[]} [warnings]
 */

/**
 * What the canary says about one integration.
 * @param {Integration} i
 * @returns {{tone: 'ok'|'warn'|'bad'|'off', text: string}}
 */
function canaryStatus(i) {
  const warnings = Array.isArray(i.warnings) ? i.warnings : [];
  if (warnings.length) return { tone: 'bad', text: warnings.length === 1 ? '1 warning' : `${warnings.length} warnings` };
  if (i.first_hook_ms != null) return { tone: 'ok', text: 'hook fired' };
  if (i.first_activity_ms != null) return { tone: 'warn', text: 'active, hook not seen yet' };
  return { tone: 'off', text: 'loaded, no activity yet' };
}

/**
 * @param {Integration} i
 * @returns {HTMLElement}
 */
function integrationRow(i) {
  const runtime = String(i.runtime ?? '?');
  const instance = String(i.instance ?? '?');
  const st = canaryStatus(i);
  const warnings = Array.isArray(i.warnings) ? i.warnings : [];
  return h(
    'li',
    {
      class: `pn-int pn-int-${st.tone}`,
      key: `int:${runtime}\u0000${instance}`,
      testid: 'integration',
      'data-runtime': runtime,
      'data-instance': instance,
    },
    h(
      'div',
      { class: 'pn-int-head' },
      h('b', { class: 'pn-int-runtime' }, runtime),
      h('span', { class: 'mono pn-int-instance', title: instance }, instance),
      h('div', { class: 'topbar-spacer' }),
      pill(st.tone, st.text, 'integration-status'),
    ),
    h(
      'dl',
      { class: 'kv pn-kv pn-int-kv' },
      kv('Hook first fired', i.first_hook_ms != null ? when(i.first_hook_ms) : h('span', { class: 'muted' }, 'never'), 'integration-hook'),
      i.last_hook_ms != null ? kv('Last hook', when(i.last_hook_ms), 'integration-last-hook') : [],
      kv('Last report', when(i.last_seen_ms), 'integration-last-seen'),
      i.first_activity_ms != null ? kv('Agent active since', when(i.first_activity_ms)) : [],
      i.started_ms != null ? kv('Loaded', when(i.started_ms)) : [],
    ),
    warnings.length
      ? h(
          'div',
          { class: 'pn-alert', role: 'alert', testid: 'integration-warnings' },
          h('div', { class: 'pn-alert-head' }, `Warning from ${runtime}`),
          h('ul', null, warnings.map((w) => h('li', null, String(w)))),
        )
      : null,
  );
}

/**
 * @param {Integration[]|undefined} list
 * @returns {HTMLElement}
 */
function integrationsPanel(list) {
  const all = Array.isArray(list) ? list.filter((i) => i && typeof i === 'object') : [];
  /** @param {Integration} i */
  const hasWarnings = (i) => Array.isArray(i.warnings) && i.warnings.length > 0;
  // Those with warnings first; otherwise the daemon's order (most recently heard from first).
  const rows = [...all.filter(hasWarnings), ...all.filter((i) => !hasWarnings(i))];
  const warned = all.filter(hasWarnings).length;
  const extras = [
    warned ? pill('bad', `${warned} with warnings`, 'integrations-warned') : null,
    h('span', { class: 'count-pill', testid: 'integrations-count' }, String(rows.length)),
  ];
  const body = rows.length
    ? [h('ul', { class: 'pn-list' }, rows.map(integrationRow))]
    : [
        h(
          'div',
          { class: 'pn-empty', testid: 'integrations-empty' },
          h('p', null, 'No integration has reported yet.'),
          h(
            'p',
            { class: 'muted small' },
            'The OpenClaw plugin (',
            h('code', null, 'integrations/openclaw'),
            ') reports here when it loads, when its agent first acts and when its hook first fires, and warns if the hook stays silent. Any integration can report with ',
            h('code', null, 'POST /v1/canary'),
            '. The Claude Code, Codex, Gemini and Cursor hooks (',
            h('code', null, 'toolgate install claude-code'),
            ', …) appear here once one of their calls is recorded, by this daemon or by a hook deciding in its own process on the same store.',
          ),
        ),
      ];
  return card('integrations', 'Integrations', extras, body);
}

// ---------------------------------------------------------------------------
// 3. Sandbox posture (toolgate-core posture.rs Posture)

/**
 * @typedef {Object} Posture
 * @property {boolean} in_container
 * @property {'none'|'weak'|'strong'} confidence
 * @property {string|null} [runtime]
 * @property {string[]} [signals]
 */

/** @type {Record<string, string>} */
const CONFIDENCE = {
  strong: 'a file or kernel signal says so',
  weak: 'only an environment variable says so, and anyone can set one',
  none: 'no container signal at all',
};

/**
 * @param {Posture|undefined} p
 * @returns {HTMLElement}
 */
function posturePanel(p) {
  if (!p || typeof p !== 'object') {
    return card('posture', 'Sandbox posture', [], [h('p', { class: 'empty' }, 'This daemon did not report its posture.')]);
  }
  const runtime = typeof p.runtime === 'string' && p.runtime ? p.runtime : null;
  const signals = Array.isArray(p.signals) ? p.signals : [];
  const sandboxed = p.in_container === true && p.confidence === 'strong';
  /** @type {'ok' | 'warn' | 'bad'} */
  let tone;
  let badge;
  let summary;
  if (sandboxed) {
    tone = 'ok';
    badge = 'in a container';
    summary = `In ${runtime ? `a ${runtime}` : 'a'} container: what the agent's calls do stays inside it, as far as its mounts, network and privileges let it.`;
  } else if (p.in_container === true) {
    tone = 'warn';
    badge = 'maybe a container';
    summary = `Perhaps in ${runtime ? `a ${runtime}` : 'a'} container, but only the environment says so: treat this machine as exposed. A profile's require_sandbox refuses calls here.`;
  } else {
    tone = 'bad';
    badge = 'no container';
    summary = 'Not in a container: a blocked call is all that stands between the agent and this machine.';
  }
  return card('posture', 'Sandbox posture', [pill(tone, badge, 'posture-status')], [
    h('p', { class: `pn-note pn-note-${tone}`, testid: 'posture-summary' }, summary),
    h(
      'dl',
      { class: 'kv pn-kv' },
      kv('In a container', p.in_container === true ? 'yes' : 'no', 'posture-in-container'),
      kv(
        'Confidence',
        h('span', null, h('b', { testid: 'posture-confidence' }, String(p.confidence ?? '–')), CONFIDENCE[p.confidence] ? h('span', { class: 'muted' }, `: ${CONFIDENCE[p.confidence]}`) : null),
      ),
      kv('Runtime', runtime || '–', 'posture-runtime', runtime ? 'mono' : null),
      kv(
        'Signals',
        signals.length
          ? h('ul', { class: 'pn-plain', testid: 'posture-signals' }, signals.map((s) => h('li', null, String(s))))
          : h('span', { class: 'muted', testid: 'posture-signals' }, 'none'),
      ),
      kv('Sandboxed for require_sandbox', sandboxed ? 'yes' : 'no (needs a strong signal)', 'posture-sandboxed'),
    ),
  ]);
}

// ---------------------------------------------------------------------------
// Entry point

/** Refreshes every "… ago" text in the last container. */
function tickAgo() {
  if (!lastContainer || !lastContainer.isConnected) return;
  for (const el of lastContainer.querySelectorAll('[data-ago]')) {
    const text = fmt.ago(Number(/** @type {HTMLElement} */ (el).dataset.ago));
    if (el.textContent !== text) el.textContent = text;
  }
}

/**
 * Renders the panels for `state` (the body of GET /v1/state) into
 * `container`, in place. Tolerates any field being absent.
 * @param {object|null|undefined} state
 * @param {HTMLElement|null} container
 */
export function render(state, container) {
  if (!container) return;
  const st = state && typeof state === 'object' ? /** @type {any} */ (state) : {};
  const next = h(
    'div',
    null,
    knowledgePanel(st.knowledge),
    integrationsPanel(st.integrations),
    posturePanel(st.posture),
  );
  morphChildren(container, next);
  lastContainer = container;
  if (!agoTimer) agoTimer = window.setInterval(tickAgo, 1000);
}
