// toolgate control UI.
//
// Plain browser JavaScript, no build step and no dependencies: the daemon
// embeds this file as it is. Everything the server sends is put into the page
// with textContent (through h()), never innerHTML, because decision records
// carry text an agent controls (commands, paths, reasons).
//
// The contract this code follows is docs/http-api.md.
'use strict';

(() => {
  // ---------------------------------------------------------------------------
  // Constants

  const TOKEN_KEY = 'toolgate.operatorToken'; // sessionStorage: dies with the tab
  const THEME_KEY = 'toolgate.theme';
  const SERIES_SECONDS = 600; // the charts show 10 minutes of 1-second buckets
  const PAGE = 100; // decisions loaded at start and per "older" click
  const MAX_RECORDS = 2000; // live rows kept in memory before the oldest are dropped
  const APPROVALS_POLL_MS = 5000;
  const STATE_POLL_MS = 10000;
  const AUDIT_POLL_MS = 60000;
  const WS_SILENCE_MS = 7000; // stats arrive every second; this much silence means a dead socket
  const URGENT_MS = 30000;

  // The shell text of a call, as the agent sent it (approval cards show
  // the exact call). What a call *does* comes from the server: each decision
  // record's `summary` is computed by the gate from what it judged.
  const COMMAND_KEYS = ['command', 'cmd', 'script', 'commandLine', 'command_line'];

  // ---------------------------------------------------------------------------
  // State. One object so signing out can reset everything at once.

  function freshState() {
    return {
      token: null,
      signedIn: false, // by token (token set) or by the session cookie (token null)
      epoch: 0, // bumped on sign-in/out so late answers from an old session are dropped
      records: new Map(), // audit seq -> DecisionRecord
      order: [], // seqs, newest first
      maxSeq: -1,
      // Paging cursors per filter ('' = unfiltered): {before, done}. We hold
      // every record matching a filter from its cursor up to the newest.
      cursors: new Map(),
      filters: { decision: '', tool: '', risk: '' },
      expanded: new Set(), // seqs whose JSON is open
      pendingLive: [], // decision events waiting for the next animation frame
      liveOverflow: false, // some queued events were dropped (hidden tab)
      approvals: [], // ApprovalView list, most urgent first
      groups: new Map(), // lead approval id -> ids of the identical calls it stands for
      leadOf: new Map(), // approval id -> its group's lead
      approvalMsgs: new Map(), // id -> {kind, text}, survives re-renders
      approvalsInFlight: false,
      approvalsAgain: false,
      series: new Map(), // Unix second -> Bucket
      latestT: 0,
      server: null, // last GET /v1/state
      serverAt: 0, // Date.now() when it arrived (uptime ticks locally)
      approvalsLoaded: false, // S.approvals came from the daemon at least once
      totals: { allow: 0, block: 0, escalate: 0 },
      totalsFrom: Infinity, // stats buckets from this second on are not in the totals yet
      tools: new Set(), // tool names seen, offered in the filter box
      ws: null,
      wsAttempt: 0,
      wsTimer: 0,
      wsCountdown: 0, // ticks the "retrying in N s" text
      wsLastMessage: 0,
      everConnected: false,
      timers: [],
      debounce: 0,
      stateDebounce: 0,
      drawQueued: false,
      hover: { dec: null, lat: null }, // hovered Unix second per chart
    };
  }
  let S = freshState();

  // ---------------------------------------------------------------------------
  // Small helpers

  const $ = (id) => document.getElementById(id);

  const h = window.toolgateDom.h;

  const numFmt = new Intl.NumberFormat();
  const fmtNum = (n) => (typeof n === 'number' && isFinite(n) ? numFmt.format(n) : '–');

  function fmtMicros(us) {
    if (!(us > 0)) return '–';
    if (us < 1000) return `${Math.round(us)} µs`;
    if (us < 1e6) return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
    return `${(us / 1e6).toFixed(2)} s`;
  }

  function fmtMicrosShort(us) {
    if (us < 1000) return `${Math.round(us)}µs`;
    if (us < 1e6) return `${+(us / 1000).toFixed(1)}ms`;
    return `${+(us / 1e6).toFixed(1)}s`;
  }

  const fmtDuration = window.toolgateFormat.duration;
  const fmtRowTime = (ts) => window.toolgateFormat.time(ts);
  const fmtAgo = window.toolgateFormat.ago;

  /** m:ss (or h:mm:ss) for countdowns. */
  function fmtClock(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    const hh = Math.floor(s / 3600);
    const mm = Math.floor((s % 3600) / 60);
    const ss = String(s % 60).padStart(2, '0');
    return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
  }

  function shortHash(hex) {
    if (typeof hex !== 'string' || hex.length <= 16) return hex || '';
    return `${hex.slice(0, 10)}…${hex.slice(-6)}`;
  }

  /** POSIX shell quoting, as the gate joins an argv array. */
  function shellQuote(arg) {
    const s = String(arg);
    if (s !== '' && /^[A-Za-z0-9_\-./=:,+@%]+$/.test(s)) return s;
    return `'${s.replace(/'/g, "'\\''")}'`;
  }

  const DECISIONS = new Set(['allow', 'block', 'escalate']);

  function badge(decision) {
    const d = DECISIONS.has(decision) ? decision : 'state';
    return h('span', { class: `badge badge-${d}` }, decision || '?');
  }

  /**
   * A knowledge hold: the call waits until the agent acknowledges what it
   * was shown (a retry or `toolgate knowledge ack`); recorded as a block,
   * it is not a refusal, so it is not shown as one.
   */
  function isHold(r) {
    return r.decision === 'block' && r.layer === 'knowledge';
  }

  function holdBadge() {
    return h('span', { class: 'badge badge-hold', title: 'Held until the agent acknowledges the knowledge it was shown' }, 'hold');
  }

  function riskTag(risk) {
    const r = /^R[0-4]$/.test(risk) ? risk : '';
    return h('span', { class: `risk ${r ? 'risk-' + r : ''}`, title: riskTitle(r) }, risk || '–');
  }

  function riskTitle(r) {
    return {
      R0: 'R0: read only',
      R1: 'R1: local workspace change',
      R2: 'R2: external read or low-impact action',
      R3: 'R3: external change or irreversible effect',
      R4: 'R4: high impact',
    }[r] || '';
  }

  function prettyJson(value) {
    try {
      return JSON.stringify(value, null, 2);
    } catch {
      return String(value);
    }
  }

  // ---------------------------------------------------------------------------
  // Summaries of calls

  /** The shell text of a call, if it carries one. */
  function callCommand(call) {
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
   */
  function summarize(call, tool, summary) {
    if (typeof summary === 'string' && summary) return summary;
    tool = tool || (call && call.tool) || '?';
    const cmd = callCommand(call);
    if (cmd != null) return cmd;
    const params = (call && call.params) || {};
    const text = Object.keys(params).length ? JSON.stringify(params) : '';
    return text.length > 160 ? `${tool} ${text.slice(0, 157)}…` : `${tool} ${text}`.trim();
  }

  /** A requester may be a plain id (ApprovalView) or {id, role} (ToolCall). */
  function requesterText(r) {
    if (r == null) return null;
    if (typeof r === 'string') return r;
    if (typeof r === 'object') return [r.id, r.role && `(${r.role})`].filter(Boolean).join(' ') || null;
    return String(r);
  }

  // ---------------------------------------------------------------------------
  // HTTP

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /**
   * Calls the daemon with the operator token. A 401 on the signed-in token
   * means it was rotated or the daemon restarted with another one: back to
   * the sign-in screen, saying so.
   */
  async function api(path, { method = 'GET', body, token = S.token } = {}) {
    // The channel is recorded on votes cast from here.
    // Without a token the browser's session cookie signs the request in;
    // X-Toolgate-Channel is what tells the daemon it is this page's.
    const headers = { Accept: 'application/json', 'X-Toolgate-Channel': 'ui' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: token ? 'omit' : 'same-origin',
      });
    } catch (e) {
      throw new ApiError(0, 'network', `Cannot reach the toolgate daemon (${e.message}).`);
    }
    const text = await res.text();
    let data = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = null;
      }
    }
    if (!res.ok) {
      const err = (data && data.error) || {};
      const e = new ApiError(res.status, err.code || `http_${res.status}`, err.message || `HTTP ${res.status} ${res.statusText}`);
      if (res.status === 401 && S.signedIn && token === S.token) {
        signOut(S.token ? `The daemon no longer accepts this token (401: ${e.message}). Sign in again.` : e.message);
      }
      throw e;
    }
    return data;
  }

  /** Runs fn only if the session that started it is still signed in. */
  function sameEpoch(fn) {
    const epoch = S.epoch;
    return (...args) => (epoch === S.epoch ? fn(...args) : undefined);
  }

  // ---------------------------------------------------------------------------
  // Sign-in and sign-out

  function showLogin(message) {
    $('app').hidden = true;
    $('login').hidden = false;
    const err = $('login-error');
    err.hidden = !message;
    err.textContent = message || '';
    const input = $('login-token');
    input.value = '';
    input.focus();
  }

  async function onLoginSubmit(ev) {
    ev.preventDefault();
    const token = $('login-token').value.trim();
    const err = $('login-error');
    if (!token) {
      err.hidden = false;
      err.textContent = 'Enter the operator token.';
      return;
    }
    const button = $('login-submit');
    button.disabled = true;
    button.textContent = 'Checking…';
    try {
      // Validate before storing: the state endpoint needs the operator role.
      const state = await api('v1/state', { token });
      sessionStorage.setItem(TOKEN_KEY, token);
      start(token, state);
    } catch (e) {
      err.hidden = false;
      if (e.status === 401) err.textContent = `That token was not accepted (401). ${e.message}`;
      else if (e.status === 403) err.textContent = 'That is not an operator token (403): the agent token cannot use the control UI.';
      else err.textContent = e.message;
      $('login-token').select();
    } finally {
      button.disabled = false;
      button.textContent = 'Sign in';
    }
  }

  function signOut(message) {
    const byCookie = S.signedIn && !S.token;
    sessionStorage.removeItem(TOKEN_KEY);
    stop();
    showLogin(message);
    // The cookie is HttpOnly: only the daemon can end that session.
    if (byCookie) api('v1/session', { method: 'DELETE', token: null }).catch(() => {});
  }

  /**
   * Signs in with the one-time code of a link `toolgate ui` printed
   * (#signin/<code>): the daemon answers with an HttpOnly session cookie,
   * so every tab of this browser is signed in, deep links included.
   */
  async function signInWithCode(code) {
    // The code works once: out of the address bar and the history at once.
    history.replaceState(null, '', location.pathname + location.search);
    try {
      await api('v1/session', { method: 'POST', body: { code }, token: null });
      start(null, null);
    } catch (e) {
      showLogin(e.message);
    }
  }

  /** Resumes a cookie session if this browser has one; else the sign-in page. */
  async function resumeSession() {
    try {
      await api('v1/whoami', { token: null });
      start(null, null);
    } catch (e) {
      showLogin(e.status === 401 || e.status === 403 ? '' : e.message);
    }
  }

  /** Stops timers and the socket and forgets everything loaded. */
  function stop() {
    const epoch = S.epoch + 1;
    for (const t of S.timers) clearInterval(t);
    clearTimeout(S.wsTimer);
    clearInterval(S.wsCountdown);
    clearTimeout(S.debounce);
    clearTimeout(S.stateDebounce);
    if (S.ws) {
      const ws = S.ws;
      S.ws = null; // onclose sees it is no longer current and does not reconnect
      ws.close(1000, 'signed out');
    }
    S = freshState();
    S.epoch = epoch;
    $('feed-body').replaceChildren();
    $('tool-list').replaceChildren();
    $('approval-list').replaceChildren();
    approvalCards.clear();
    $('toasts').replaceChildren();
    toastsByKey.clear();
    document.title = 'toolgate';
  }

  /** Shows the dashboard and starts loading and listening. */
  function start(token, initialState) {
    stop();
    S.token = token; // null: signed in by the session cookie
    S.signedIn = true;
    $('login').hidden = true;
    $('app').hidden = false;
    showWhoami();
    readFiltersFromForm();

    connectWs();
    if (initialState) applyState(initialState);
    else loadState();
    loadInitialDecisions();
    refreshApprovals();
    verifyAudit();

    S.timers.push(setInterval(refreshApprovals, APPROVALS_POLL_MS));
    S.timers.push(setInterval(loadState, STATE_POLL_MS));
    S.timers.push(setInterval(verifyAudit, AUDIT_POLL_MS));
    S.timers.push(setInterval(tick, 1000));
    S.timers.push(setInterval(watchSocket, 2000));
    requestAnimationFrame(() => drawCharts());
  }

  /** Once a second: countdowns, uptime and the socket watchdog text. */
  function tick() {
    updateCountdowns();
    renderUptime();
  }

  // ---------------------------------------------------------------------------
  // Live events over /ws

  function setConn(state, text) {
    const el = $('conn');
    el.dataset.state = state;
    $('conn-label').textContent = text;
  }

  function wsUrl() {
    const url = new URL('ws', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return url.href;
  }

  function connectWs() {
    clearTimeout(S.wsTimer);
    clearInterval(S.wsCountdown);
    setConn('connecting', S.everConnected ? 'Reconnecting…' : 'Connecting…');
    let ws;
    try {
      ws = new WebSocket(wsUrl());
    } catch (e) {
      scheduleReconnect();
      return;
    }
    S.ws = ws;
    S.wsLastMessage = Date.now();
    // Browsers cannot set headers on a WebSocket: the token is the first
    // message, or the session cookie went with the handshake.
    ws.onopen = () => {
      if (S.token) ws.send(JSON.stringify({ token: S.token }));
    };
    ws.onmessage = (ev) => {
      if (S.ws !== ws) return;
      S.wsLastMessage = Date.now();
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg && msg.type === 'hello') onHello(msg);
      else if (msg) onEvent(msg);
    };
    ws.onclose = (ev) => {
      if (S.ws !== ws) return; // replaced or signed out
      S.ws = null;
      if (ev.code === 4401) {
        signOut(S.token ? 'The daemon refused this token on the live feed (4401). Sign in again.' : 'This browser\'s session ended (4401): sign in again with a link from `toolgate ui`.');
        return;
      }
      scheduleReconnect();
    };
  }

  function onHello(msg) {
    S.wsAttempt = 0;
    setConn('live', 'Live');
    if (msg.version) $('version').textContent = `v${msg.version}`;
    // After a gap, fetch what was missed; the first connection is covered by
    // the initial loads.
    if (S.everConnected) catchUp();
    S.everConnected = true;
  }

  /** Exponential backoff with jitter, 0.5 s up to 30 s. */
  function scheduleReconnect() {
    const base = Math.min(30000, 500 * 2 ** S.wsAttempt);
    S.wsAttempt += 1;
    const delay = Math.round(base / 2 + (Math.random() * base) / 2);
    const until = Date.now() + delay;
    const show = () => setConn('waiting', `Offline, retrying in ${Math.max(1, Math.ceil((until - Date.now()) / 1000))} s`);
    show();
    clearInterval(S.wsCountdown);
    S.wsCountdown = setInterval(show, 1000);
    clearTimeout(S.wsTimer);
    S.wsTimer = setTimeout(connectWs, delay);
  }

  /** A socket that stops talking (sleeping laptop, dead proxy) is replaced. */
  function watchSocket() {
    if (S.ws && S.ws.readyState === WebSocket.OPEN && Date.now() - S.wsLastMessage > WS_SILENCE_MS) {
      const ws = S.ws;
      S.ws = null;
      ws.close(4000, 'silent');
      scheduleReconnect();
    }
  }

  function onEvent(msg) {
    switch (msg.type) {
      case 'decision':
        onDecisionEvent(msg);
        break;
      case 'approval':
        onApprovalEvent(msg);
        break;
      case 'policy':
        onPolicyEvent(msg);
        break;
      case 'stats':
        onStats(msg);
        break;
      case 'bypass':
        renderBypasses(msg.active);
        break;
      case 'lagged':
        // Not in docs/http-api.md, but the daemon sends it when this client
        // fell behind and events were dropped: re-fetch instead.
        catchUp();
        break;
      default:
        break; // newer daemons may add event types
    }
  }

  /** After a reconnect: everything that may have changed while we were away. */
  function catchUp() {
    loadState();
    refreshApprovals();
    catchUpDecisions();
  }

  // ---------------------------------------------------------------------------
  // Decisions: data

  function filterKey(f) {
    return [f.decision, f.tool.trim(), f.risk].join('|');
  }

  function hasFilters(f) {
    return !!(f.decision || f.tool.trim() || f.risk);
  }

  /**
   * The same test the daemon applies to `/v1/decisions` (every given field
   * must match exactly), so the live feed and older pages agree. The tool box
   * offers the tool names seen so far to make exact names easy to enter.
   */
  function matches(r, f) {
    if (f.decision && r.decision !== f.decision) return false;
    if (f.risk && r.risk !== f.risk) return false;
    const tool = f.tool.trim();
    if (tool && r.tool !== tool) return false;
    return true;
  }

  function queryFor(f, before) {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (f.decision) q.set('decision', f.decision);
    if (f.tool.trim()) q.set('tool', f.tool.trim());
    if (f.risk) q.set('risk', f.risk);
    if (before != null) q.set('before', String(before));
    return `v1/decisions?${q}`;
  }

  /** Adds records; returns true if any was new. Keeps S.order newest first. */
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
   */
  function cursorFor(f) {
    const key = filterKey(f);
    const cands = [S.cursors.get(filterKey(UNFILTERED))];
    if (hasFilters(f)) cands.push(S.cursors.get(key));
    const known = cands.filter(Boolean);
    if (!known.length) return null;
    if (known.some((c) => c.done)) return { done: true };
    return { done: false, before: Math.min(...known.map((c) => c.before)) };
  }

  function setCursor(f, nextBefore) {
    S.cursors.set(filterKey(f), nextBefore == null ? { done: true } : { done: false, before: nextBefore });
  }

  const UNFILTERED = { decision: '', tool: '', risk: '' };

  async function loadInitialDecisions() {
    const done = sameEpoch((res) => {
      mergeRecords(res.decisions);
      setCursor(UNFILTERED, res.next_before);
      renderFeed();
    });
    try {
      done(await api(queryFor(UNFILTERED)));
    } catch (e) {
      if (e.status !== 401) sameEpoch(() => setOlderNote(`Could not load decisions: ${e.message}`))();
    }
  }

  /** Loads one older page for the current filters, server-side filtered. */
  async function loadOlder() {
    const f = { ...S.filters };
    const cursor = cursorFor(f);
    if (cursor && cursor.done) return;
    const btn = $('older-btn');
    btn.disabled = true;
    btn.textContent = 'Loading…';
    const apply = sameEpoch((res) => {
      mergeRecords(res.decisions);
      setCursor(f, res.next_before);
      renderFeed();
    });
    try {
      apply(await api(queryFor(f, cursor ? cursor.before : null)));
    } catch (e) {
      if (e.status !== 401) sameEpoch(() => setOlderNote(`Could not load older decisions: ${e.message}`))();
    } finally {
      sameEpoch(renderOlderButton)();
    }
  }

  /**
   * After a reconnect, pages back until it meets a record it already holds.
   * If the gap is too large it starts over from the newest page rather than
   * show a feed with a silent hole in it.
   */
  async function catchUpDecisions() {
    const known = S.maxSeq;
    const collected = [];
    let before = null;
    let next = null;
    const epoch = S.epoch;
    try {
      for (let page = 0; page < 10; page++) {
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

  function onDecisionEvent(msg) {
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
  // Decisions: rendering

  /** The table row for one record, plus its detail row when expanded. */
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
      h('td', { class: 'time', title: r.ts || '' }, fmtRowTime(r.ts)),
      h('td', null, isHold(r) ? holdBadge() : badge(r.decision)),
      h('td', null, riskTag(r.risk)),
      h('td', { title: r.tool || '' }, r.tool || ''),
      h('td', { class: 'agent', title: [r.agent, r.session && `session ${r.session}`].filter(Boolean).join(' · ') }, shownWhole(r.agent || '–')),
      h('td', { class: 'call', title: summary }, summary),
      h('td', { class: 'layer' }, r.layer || ''),
      h('td', { class: 'reason', title: r.reason || '' }, r.reason || ''),
    );
    return expanded ? [row, detailRow(r)] : [row];
  }

  function detailRow(r) {
    const meta = [
      ['seq', r.seq],
      ['time', r.ts],
      ['score', r.score],
      ['agent', r.agent],
      ['session', r.session],
      ['approval', r.approval],
      ['trace', r.trace],
    ]
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
      const r = S.records.get(seq);
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
    $('feed-count').textContent = hasFilters(S.filters) ? `${fmtNum(shown)} of ${fmtNum(total)} loaded` : `${fmtNum(total)} loaded`;
    renderOlderButton();
  }

  function renderOlderButton() {
    const btn = $('older-btn');
    const cursor = cursorFor(S.filters);
    const done = cursor && cursor.done;
    btn.disabled = !!done || !cursor;
    btn.textContent = done ? 'No older entries' : hasFilters(S.filters) ? 'Load older matching' : 'Load older';
    setOlderNote(
      hasFilters(S.filters) && !done ? 'Filters apply to what is loaded; older pages are filtered by the daemon.' : '',
    );
  }

  function setOlderNote(text) {
    $('older-note').textContent = text;
  }

  function noteTool(tool) {
    if (typeof tool !== 'string' || !tool || S.tools.has(tool) || S.tools.size >= 500) return;
    S.tools.add(tool);
    $('tool-list').append(h('option', { value: tool }));
  }

  function readFiltersFromForm() {
    S.filters = {
      decision: $('f-decision').value,
      tool: $('f-tool').value,
      risk: $('f-risk').value,
    };
  }

  function onFiltersChanged() {
    readFiltersFromForm();
    renderFeed();
  }

  // ---------------------------------------------------------------------------
  // Approvals

  const approvalCards = new Map(); // id -> {el, refs}

  function onApprovalEvent() {
    // Any approval event may change the list; one re-fetch covers a burst.
    // (refreshApprovals itself queues one more run if a fetch is in flight.)
    if (!S.debounce) {
      S.debounce = setTimeout(() => {
        S.debounce = 0;
        refreshApprovals();
      }, 80);
    }
  }

  /** GET /v1/approvals; overlapping calls collapse into one follow-up. */
  async function refreshApprovals() {
    if (!S.signedIn) return;
    if (S.approvalsInFlight) {
      S.approvalsAgain = true;
      return;
    }
    S.approvalsInFlight = true;
    const epoch = S.epoch;
    try {
      const res = await api('v1/approvals');
      if (epoch !== S.epoch) return;
      S.approvals = byUrgency((res && res.approvals) || []);
      notifyNew(S.approvals, S.approvalsLoaded);
      S.approvalsLoaded = true;
      $('approvals-error').hidden = true;
      renderApprovals();
    } catch (e) {
      if (epoch !== S.epoch || e.status === 401) return;
      $('approvals-error').hidden = false;
      $('approvals-error').textContent = `Could not load approvals: ${e.message}`;
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

  const RISK_RANK = { R4: 4, R3: 3, R2: 2, R1: 1, R0: 0 };

  // Desktop notifications, opt-in per browser: a call that newly waits for a
  // person, when this tab is not the one in front.
  const NOTIFY_KEY = 'toolgate.notify';
  const notified = new Set();

  function notifyWanted() {
    return localStorage.getItem(NOTIFY_KEY) === 'on' && 'Notification' in window && Notification.permission === 'granted';
  }

  function renderNotifyButton() {
    const btn = $('notify-btn');
    if (!('Notification' in window)) {
      btn.hidden = true;
      return;
    }
    const on = notifyWanted();
    btn.textContent = on ? 'Notifications: on' : 'Notify me';
    btn.setAttribute('aria-pressed', String(on));
    btn.title = Notification.permission === 'denied'
      ? 'This browser blocks notifications from this page: allow them in the site settings'
      : on ? 'A desktop notification when a call waits for approval and this tab is not in front (click to turn off)'
        : 'Get a desktop notification when a call waits for approval';
  }

  async function toggleNotify() {
    if (notifyWanted()) {
      localStorage.setItem(NOTIFY_KEY, 'off');
    } else {
      const answer = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
      localStorage.setItem(NOTIFY_KEY, answer === 'granted' ? 'on' : 'off');
      if (answer !== 'granted') toast('error', 'Notifications are blocked', 'The browser did not allow notifications for this page.', 8000);
    }
    renderNotifyButton();
  }

  /**
   * Notifies of approvals that were not there before (never on the first
   * load: what was already waiting is on the screen).
   */
  function notifyNew(list, loadedBefore) {
    for (const a of list) {
      if (a.state !== 'pending' || notified.has(a.id)) continue;
      notified.add(a.id);
      if (!loadedBefore || !notifyWanted() || document.visibilityState === 'visible' && document.hasFocus()) continue;
      const n = new Notification(`toolgate: ${a.risk || ''} call waits for approval`, {
        body: shownWhole(String(a.summary || '')).slice(0, 200),
        tag: a.id,
      });
      n.onclick = () => {
        window.focus();
        location.hash = `#approval/${a.id}`;
        n.close();
      };
    }
  }

  /**
   * How many approvals wait for a vote: one number for the tile, the inbox
   * and the daemon panel alike. The inbox's own list once it is loaded
   * (it is refreshed on every approval event); the daemon's count before.
   */
  function pendingCount() {
    if (S.approvalsLoaded) return S.approvals.filter((a) => a.state === 'pending').length;
    return S.server && typeof S.server.pending_approvals === 'number' ? S.server.pending_approvals : null;
  }

  /** Whether an agent is waiting on this approval right now. */
  function agentWaiting(a) {
    return a.state === 'pending' && typeof a.waiting_until_ms === 'number' && a.waiting_until_ms > Date.now();
  }

  /**
   * Most urgent first: pending before approved (an approved call only waits
   * for the agent's retry), an agent waiting on it now, then the higher
   * risk, then the sooner expiry, then the older.
   */
  function byUrgency(approvals) {
    const key = (a) => [
      a.state === 'pending' ? 0 : 1,
      agentWaiting(a) ? 0 : 1,
      -(RISK_RANK[a.risk] ?? -1),
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
   */
  let focusedApproval = null;
  function focusApproval(id) {
    focusedApproval = id;
    for (const [cid, card] of approvalCards) card.el.classList.toggle('focused', cid === id);
    const card = id && approvalCards.get(id);
    if (card) card.el.scrollIntoView({ block: 'nearest' });
  }
  document.addEventListener('keydown', (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
    if (typing) {
      if (ev.key === 'Escape') t.blur();
      return;
    }
    const ids = S.approvals.map((a) => a.id).filter((id) => approvalCards.has(id));
    if (!ids.length) return;
    const at = ids.indexOf(focusedApproval);
    if (ev.key === 'j') {
      focusApproval(ids[Math.min(at + 1, ids.length - 1)]);
    } else if (ev.key === 'k') {
      focusApproval(ids[Math.max(at - 1, 0)]);
    } else if ((ev.key === 'a' || ev.key === 'd') && at >= 0) {
      const a = S.approvals.find((x) => x.id === focusedApproval);
      if (!a || a.state !== 'pending') return;
      ev.preventDefault();
      // Like a mail inbox: once voted, the next card has the keyboard.
      const next = ids[at + 1] || ids[at - 1] || null;
      vote(focusedApproval, ev.key === 'a');
      focusApproval(next);
    } else {
      return;
    }
    ev.preventDefault();
  });

  /**
   * Updates the cards in place (keyed by id) so a reason being typed, focus
   * and an open "full call" survive the 5-second refresh.
   */
  function renderApprovals() {
    const list = $('approval-list');
    const seen = new Set();
    let prev = null;
    groupIdentical();
    for (const a of S.approvals) {
      if (!a || !a.id || !S.groups.has(a.id)) continue;
      seen.add(a.id);
      let card = approvalCards.get(a.id);
      if (!card) {
        card = buildApprovalCard(a);
        approvalCards.set(a.id, card);
      }
      updateApprovalCard(card, a);
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
    const pending = pendingCount();
    placeInbox(pending > 0);
    $('approvals-empty').hidden = S.approvals.length > 0;
    const pill = $('approvals-count');
    pill.textContent = String(pending);
    pill.title = `${pending} waiting for a vote; ${S.approvals.length - pending} approved, waiting for the agent's retry`;
    pill.classList.toggle('active', pending > 0);
    $('t-pending').textContent = fmtNum(pending);
    renderStateList();
    $('tile-pending').classList.toggle('active', pending > 0);
    document.title = pending > 0 ? `(${pending}) toolgate` : 'toolgate';
    if (focusedApproval && !approvalCards.has(focusedApproval)) focusedApproval = null;
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
        S.groups.get(lead).push(a.id);
        S.leadOf.set(a.id, lead);
      } else {
        byKey.set(key, a.id);
        S.groups.set(a.id, [a.id]);
        S.leadOf.set(a.id, a.id);
      }
    }
  }

  /**
   * While anything waits for a person, the inbox is the main view (top of
   * the main column, full width); otherwise it sits in the side column.
   */
  function placeInbox(main) {
    const card = document.querySelector('.approvals-card');
    const home = main ? document.querySelector('.col-main') : document.querySelector('.col-side');
    if (card.parentElement !== home) home.prepend(card);
    card.classList.toggle('inbox-main', main);
  }

  /**
   * A decision's approve_url ends in #approval/<id>: bring that card into
   * view once it is on the page, and mark it so the operator sees which.
   */
  let linkedShown = null;
  function showLinkedApproval() {
    const m = /^#approval\/([0-9a-f]{32})$/.exec(location.hash);
    const id = m ? (S.leadOf && S.leadOf.get(m[1])) || m[1] : null;
    for (const [cid, card] of approvalCards) card.el.classList.toggle('linked', cid === id);
    if (!id || linkedShown === id) return;
    const card = approvalCards.get(id);
    if (!card) return;
    linkedShown = id;
    card.el.scrollIntoView({ block: 'center', behavior: 'smooth' });
  }
  window.addEventListener('hashchange', () => {
    linkedShown = null;
    showLinkedApproval();
  });

  function buildApprovalCard(a) {
    const id = a.id;
    const refs = {};
    refs.risk = h('span');
    refs.state = h('span', { class: 'badge badge-state' });
    refs.countdown = h('span', { class: 'countdown' });
    refs.waiting = h('span', { class: 'badge badge-waiting', 'data-testid': `waiting-${id}`, hidden: true });
    refs.count = h('span', { class: 'badge badge-count', 'data-testid': `count-${id}`, hidden: true });
    refs.members = h('p', { class: 'approval-members small muted', hidden: true });
    refs.cmd = h('pre', { class: 'cmd', 'aria-label': 'Call to approve' });
    refs.reason = h('p', { class: 'approval-reason' });
    refs.findings = h('ul', { class: 'findings', 'data-testid': `findings-${id}`, hidden: true });
    refs.meta = h('dl', { class: 'approval-meta' });
    refs.votes = h('div', { class: 'votes' });
    refs.deliveries = h('div', { class: 'deliveries small muted', 'data-testid': `deliveries-${id}` });
    refs.json = h('pre', { class: 'json' });
    refs.input = h('input', {
      type: 'text',
      placeholder: 'Reason (optional)',
      'aria-label': `Reason for ${id}`,
      maxlength: '500',
      onkeydown: (ev) => {
        if (ev.key === 'Enter') ev.preventDefault();
      },
    });
    refs.approve = h('button', {
      type: 'button',
      class: 'btn btn-sm btn-approve',
      'aria-label': `Approve ${id}`,
      'data-testid': `approve-${id}`,
      onclick: () => vote(id, true),
    }, 'Approve');
    refs.deny = h('button', {
      type: 'button',
      class: 'btn btn-sm btn-deny',
      'aria-label': `Deny ${id}`,
      'data-testid': `deny-${id}`,
      onclick: () => vote(id, false),
    }, 'Deny');
    refs.actions = h('div', { class: 'actions' }, refs.input, refs.approve, refs.deny);
    refs.msg = h('p', { class: 'approval-msg', role: 'status', hidden: true });
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
      refs.msg,
    );
    return { el, refs, busy: false };
  }

  /** The exact call, as the operator must see it before approving. */
  function approvalCallText(a) {
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
   */
  function showFlagged(pre, text, findings) {
    // Each word with the offsets of its bare part (quotes and punctuation
    // at its edges are matched around, never marked).
    const tokens = [...text.matchAll(/\S+/g)].map((m) => {
      const lead = m[0].length - m[0].replace(LEADING_PUNCT, '').length;
      const trail = m[0].length - m[0].replace(TRAILING_PUNCT, '').length;
      return { start: m.index + lead, end: m.index + m[0].length - trail, word: bare(m[0]) };
    });
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

  /** A word without the quotes and shell punctuation around it. */
  function bare(word) {
    return String(word).replace(LEADING_PUNCT, '').replace(TRAILING_PUNCT, '');
  }

  /**
   * Control characters (but newline and tab) and bidirectional-text
   * controls as visible escapes: text an agent chose must not reorder or
   * hide part of what the operator approves.
   */
  function shownWhole(text) {
    return String(text).replace(
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
      (c) => `\\u{${c.codePointAt(0).toString(16)}}`,
    );
  }

  function updateApprovalCard(card, a) {
    const { el, refs } = card;
    el.classList.toggle('approved', a.state === 'approved');
    refs.risk.replaceWith((refs.risk = riskTag(a.risk)));
    refs.state.textContent = a.state || '?';
    refs.state.className = `badge badge-state ${a.state || ''}`;
    const findings = Array.isArray(a.findings) ? a.findings : [];
    showFlagged(refs.cmd, approvalCallText(a), findings);
    refs.reason.textContent = a.reason || '';
    // Every finding, when there is more than the one the reason names.
    refs.findings.hidden = findings.length < 2;
    refs.findings.replaceChildren(
      ...(findings.length < 2
        ? []
        : findings.map((f) =>
            h(
              'li',
              { class: `finding ${f.verdict}` },
              riskTag(f.risk),
              h('span', { class: 'finding-layer' }, f.layer),
              h('span', null, shownWhole(f.reason)),
            ),
          )),
    );
    refs.json.textContent = prettyJson(a.call);

    const call = a.call || {};
    const meta = [
      ['requester', requesterText(a.requester) || requesterText(call.requester)],
      ['agent', a.agent || call.agent],
      ['session', a.session || call.session],
      // The daemon judges a call that names no directory as in an unknown
      // one (paths/UNKNOWN_CWD), never in its own: say so in words.
      ['cwd', (a.cwd || call.cwd) === '/(cwd unknown)' ? 'not sent by the agent (relative paths judged as unknown)' : a.cwd || call.cwd],
      ['created', a.created_ms ? fmtRowTime(a.created_ms) : null],
    ].filter(([, v]) => v);
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
    refs.actions.hidden = !canVote;
    refs.approve.disabled = card.busy;
    refs.deny.disabled = card.busy;

    const msg = S.approvalMsgs.get(a.id);
    if (!msg && a.state === 'approved') {
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

  /** Where the request was sent (routing targets) and how each stands. */
  function renderDeliveries(el, list) {
    const items = Array.isArray(list) ? list : [];
    el.hidden = items.length === 0;
    const word = { pending: 'sending', delivered: 'sent', retrying: 'retrying', failed: 'failed' };
    el.replaceChildren(
      ...(items.length ? ['sent to: '] : []),
      ...items.map((t, i) => {
        const st = (t.state && t.state.state) || 'pending';
        const err = t.state && t.state.error ? ` (${t.state.error})` : '';
        return h(
          'span',
          { class: `delivery ${st}`, title: `${t.kind} ${t.target}: ${st}, ${t.attempts} tr${t.attempts === 1 ? 'y' : 'ies'}${err}` },
          `${i ? ' · ' : ''}${t.name} ${word[st] || st}`,
        );
      }),
    );
  }

  function updateCountdowns() {
    const now = Date.now();
    for (const card of approvalCards.values()) {
      const w = card.refs.waiting;
      const until = Number(w.dataset.until);
      const waitLeft = until ? until - now : 0;
      w.hidden = waitLeft <= 0;
      w.textContent = waitLeft > 0 ? `agent waiting — ${Math.ceil(waitLeft / 1000)} s left` : '';
      const el = card.refs.countdown;
      const deadline = Number(el.dataset.deadline);
      if (!deadline) {
        el.replaceChildren();
        continue;
      }
      const left = deadline - now;
      el.classList.toggle('urgent', left < URGENT_MS);
      if (left <= 0) el.replaceChildren(h('b', null, 'expired'));
      else el.replaceChildren(`${el.dataset.label} `, h('b', null, fmtClock(left)));
    }
  }

  /**
   * Shows who votes cast here count as: the person whose token signed in,
   * or "operator" (the administrator) for the shared operator token.
   */
  async function showWhoami() {
    const el = $('whoami');
    try {
      const me = await api('v1/whoami');
      el.textContent = me.identity;
      $('signed-in-as').title = me.person
        ? `Signed in with ${me.identity}'s own token: votes are recorded as ${me.identity}.`
        : 'Signed in with the shared operator token: votes are recorded as the administrator ("operator"), one person in every quorum. Give each approver a token of their own with `toolgate operators add NAME`.';
    } catch (e) {
      el.textContent = '?';
    }
  }

  /** Approve or deny, with an optional reason; the vote is the signed-in person's. */
  async function vote(id, approve) {
    const card = approvalCards.get(id);
    if (!card || card.busy) return;
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
    let msg;
    try {
      let res;
      for (const gid of group) {
        res = await api(`v1/approvals/${encodeURIComponent(gid)}/${approve ? 'approve' : 'deny'}`, { method: 'POST', body });
        if (epoch !== S.epoch) return;
        if (res && res.approval) replaceApproval(res.approval);
      }
      msg = outcomeMessage(res);
      if (group.length > 1) msg = { ...msg, text: `${group.length} identical calls: ${msg.text}` };
      card.refs.input.value = '';
    } catch (e) {
      if (epoch !== S.epoch || e.status === 401) return;
      if (e.status === 409) msg = { kind: 'error', text: `Refused: ${e.message}` };
      else if (e.status === 404) msg = { kind: 'error', text: 'This approval no longer exists: it was used, expired or resolved elsewhere.' };
      else if (e.status === 403) msg = { kind: 'error', text: `Forbidden: ${e.message}` };
      else msg = { kind: 'error', text: `${approve ? 'Approve' : 'Deny'} failed: ${e.message}` };
    }
    card.busy = false;
    if (msg) S.approvalMsgs.set(id, msg);
    renderApprovals();
    refreshApprovals();
  }

  function outcomeMessage(res) {
    const o = res && res.outcome;
    if (o === 'approved') {
      const until = res.usable_until_ms ? ` The agent may retry it until ${fmtRowTime(res.usable_until_ms)}.` : '';
      return { kind: 'ok', text: `Approved.${until}` };
    }
    if (o === 'recorded') return { kind: 'info', text: `Vote recorded: ${res.have} of ${res.need} approvals so far.` };
    if (o === 'denied') return { kind: 'info', text: 'Denied. The agent gets a block.' };
    return { kind: 'info', text: `Done (${o || 'no outcome given'}).` };
  }

  function replaceApproval(view) {
    const i = S.approvals.findIndex((a) => a.id === view.id);
    const open = view.state === 'pending' || view.state === 'approved';
    if (i >= 0) {
      if (open) S.approvals[i] = view;
      else S.approvals.splice(i, 1);
    }
    S.approvals = byUrgency(S.approvals);
  }

  // ---------------------------------------------------------------------------
  // Policy, state and audit

  function onPolicyEvent(msg) {
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

  async function loadState() {
    const epoch = S.epoch;
    try {
      const st = await api('v1/state');
      if (epoch === S.epoch) applyState(st);
    } catch (e) {
      // Shown by the connection indicator and the next poll; 401 signs out.
    }
  }

  /**
   * The emergency bypasses in force: a banner for as long as one lasts,
   * saying which layers are lifted, by whom, until when and why.
   */
  function renderBypasses(active) {
    const el = $('bypass-banner');
    const list = Array.isArray(active) ? active : [];
    el.hidden = list.length === 0;
    el.replaceChildren(
      ...(list.length ? [h('div', null, `Emergency bypass in force (${list.length})`)] : []),
      ...list.map((b) =>
        h('p', null, `${(b.layers || []).join(', ')} lifted by ${b.by} until ${fmtRowTime(b.until_ms)}: ${b.reason}`),
      ),
    );
  }

  function applyState(st) {
    if (!st) return;
    S.server = st;
    S.serverAt = Date.now();
    if (st.totals) {
      S.totals = { allow: st.totals.allow || 0, block: st.totals.block || 0, escalate: st.totals.escalate || 0 };
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
    if (window.toolgatePanels) window.toolgatePanels.render(st, $('panels'));
    if (!S.approvalsLoaded) $('t-pending').textContent = fmtNum(pendingCount());
  }

  function renderTotals() {
    $('t-allow').textContent = fmtNum(S.totals.allow);
    $('t-block').textContent = fmtNum(S.totals.block);
    $('t-escalate').textContent = fmtNum(S.totals.escalate);
  }

  function renderStateList() {
    const st = S.server;
    if (!st) return;
    const p = st.policy || {};
    const err = $('policy-error');
    err.hidden = !p.last_error;
    err.textContent = p.last_error ? `Last policy reload failed (the previous policy stays in force):\n${p.last_error}` : '';
    const rows = [
      ['Policy', p.origin, true],
      ['Loaded', p.loaded ? `${fmtRowTime(p.loaded)} (${fmtAgo(p.loaded)}), ${fmtNum(p.reloads || 0)} reload${p.reloads === 1 ? '' : 's'}` : null],
      ['Store', st.store, true],
      ['Listening', st.listen, true],
      ['Started', st.started ? fmtRowTime(st.started) : null],
      ['Uptime', uptimeText(), false, 'uptime'],
      ['Pending', fmtNum(pendingCount())],
      ['Audit log', st.audit ? `${fmtNum(st.audit.length)} entries, head ${shortHash(st.audit.head_hash)}` : null, true],
      ['Version', st.version],
    ].filter(([, v]) => v != null && v !== '');
    const list = $('state-list');
    list.replaceChildren(
      ...rows.flatMap(([k, v, mono, id]) => [
        h('dt', null, k),
        h('dd', { class: mono ? 'mono' : null, id: id ? `state-${id}` : null, title: String(v) }, String(v)),
      ]),
    );
  }

  function uptimeText() {
    const st = S.server;
    if (!st || typeof st.uptime_s !== 'number') return null;
    return fmtDuration(st.uptime_s * 1000 + (Date.now() - S.serverAt));
  }

  function renderUptime() {
    const el = $('state-uptime');
    const text = uptimeText();
    if (el && text) el.textContent = text;
  }

  async function verifyAudit() {
    const btn = $('audit-btn');
    btn.disabled = true;
    btn.textContent = 'Checking…';
    const epoch = S.epoch;
    try {
      const res = await api('v1/audit/verify');
      if (epoch === S.epoch) renderAudit(res, null);
    } catch (e) {
      if (epoch === S.epoch && e.status !== 401) renderAudit(null, e);
    } finally {
      if (epoch === S.epoch) {
        btn.disabled = false;
        btn.textContent = 'Re-check';
      }
    }
  }

  function renderAudit(res, error) {
    const body = $('audit-body');
    const tile = $('t-audit');
    const checked = `checked ${fmtRowTime(Date.now())}`;
    if (error) {
      body.replaceChildren(h('p', { class: 'audit-status bad' }, 'Could not verify'), h('p', { class: 'audit-detail' }, error.message));
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
          h('b', null, fmtNum(res.entries)),
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

  // ---------------------------------------------------------------------------
  // Toasts

  const toastsByKey = new Map(); // key -> {el, count, timer, titleEl, ttl}

  /**
   * Shows a toast. The same key again (a burst of identical events) bumps a
   * counter on the toast already shown instead of stacking copies.
   */
  function toast(kind, title, text, ttl, key) {
    const known = key && toastsByKey.get(key);
    if (known && known.el.isConnected) {
      known.count += 1;
      known.titleEl.textContent = `${title} (×${known.count})`;
      armToast(known);
      return;
    }
    const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss' }, '×');
    const titleEl = h('div', { class: 'toast-title' }, title);
    const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status', dataset: { key: key || '' } },
      titleEl, close, text ? h('div', { class: 'toast-body' }, text) : null);
    const entry = { el, count: 1, timer: 0, titleEl, ttl };
    if (key) toastsByKey.set(key, entry);
    close.addEventListener('click', () => removeToast(key, el));
    const box = $('toasts');
    box.append(el);
    while (box.children.length > 5) removeToast(box.firstElementChild.dataset.key, box.firstElementChild);
    armToast(entry);
  }

  function armToast(entry) {
    clearTimeout(entry.timer);
    if (entry.ttl > 0) entry.timer = setTimeout(() => removeToast(null, entry.el), entry.ttl);
  }

  function removeToast(key, el) {
    el.remove();
    if (key && toastsByKey.get(key) && toastsByKey.get(key).el === el) toastsByKey.delete(key);
  }

  /** Removes the toasts whose key starts with prefix. */
  function dismissToasts(prefix) {
    for (const [key, entry] of [...toastsByKey]) {
      if (key.startsWith(prefix)) {
        entry.el.remove();
        toastsByKey.delete(key);
      }
    }
  }

  // ---------------------------------------------------------------------------
  // Charts: canvas, no libraries

  function seedSeries(series) {
    for (const b of series) if (b && typeof b.t === 'number') S.series.set(b.t, b);
    pruneSeries();
    queueDraw();
  }

  function onStats(msg) {
    const { type, ...bucket } = msg;
    void type;
    if (typeof bucket.t !== 'number') return;
    S.series.set(bucket.t, bucket);
    if (bucket.t >= S.totalsFrom) {
      for (const k of DECISIONS) S.totals[k] += bucket[k] || 0;
      renderTotals();
    }
    pruneSeries();
    queueDraw();
  }

  function pruneSeries() {
    let latest = S.latestT;
    for (const t of S.series.keys()) if (t > latest) latest = t;
    S.latestT = latest;
    for (const t of S.series.keys()) if (t <= latest - SERIES_SECONDS) S.series.delete(t);
    renderRates();
  }

  /** The tiles derived from the last minute of buckets. */
  function renderRates() {
    let checks = 0;
    let p99 = 0;
    for (let t = S.latestT - 59; t <= S.latestT; t++) {
      const b = S.series.get(t);
      if (!b) continue;
      checks += (b.allow || 0) + (b.block || 0) + (b.escalate || 0);
      if (b.p99_us > p99) p99 = b.p99_us;
    }
    $('t-rate').textContent = S.latestT ? fmtNum(checks) : '–';
    $('t-p99').textContent = S.latestT ? fmtMicros(p99) : '–';
  }

  function queueDraw() {
    if (S.drawQueued) return;
    S.drawQueued = true;
    requestAnimationFrame(() => {
      S.drawQueued = false;
      drawCharts();
    });
  }

  function drawCharts() {
    if ($('app').hidden) return;
    drawDecisionsChart();
    drawLatencyChart();
  }

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  /** Sizes the backing store to CSS pixels × devicePixelRatio, so lines stay sharp. */
  function prepareCanvas(canvas) {
    const dpr = window.devicePixelRatio || 1;
    const rect = canvas.getBoundingClientRect();
    const w = Math.max(1, Math.round(rect.width * dpr));
    const ht = Math.max(1, Math.round(rect.height * dpr));
    if (canvas.width !== w || canvas.height !== ht) {
      canvas.width = w;
      canvas.height = ht;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, rect.width, rect.height);
    return { ctx, w: rect.width, h: rect.height };
  }

  /** A round axis maximum and step (1, 2, 5 × 10^k) for about 4 gridlines. */
  function niceScale(max) {
    if (!(max > 0)) return { max: 1, step: 1 };
    const rough = max / 4;
    const mag = 10 ** Math.floor(Math.log10(rough));
    const norm = rough / mag;
    const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
    return { max: Math.ceil(max / step) * step, step };
  }

  const PAD = { left: 44, right: 8, top: 8, bottom: 18 };

  /** The 600 seconds on the x axis, ending at the newest bucket. */
  function timeWindow() {
    const end = S.latestT || Math.floor(Date.now() / 1000) - 1;
    return { start: end - SERIES_SECONDS + 1, end };
  }

  function drawGrid(ctx, w, hgt, scale, fmt, win) {
    const plotW = w - PAD.left - PAD.right;
    const plotH = hgt - PAD.top - PAD.bottom;
    ctx.font = `10px ${cssVar('--sans') || 'sans-serif'}`;
    ctx.fillStyle = cssVar('--muted');
    ctx.strokeStyle = cssVar('--grid');
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let v = 0; v <= scale.max + scale.step / 2; v += scale.step) {
      const y = Math.round(PAD.top + plotH - (v / scale.max) * plotH) + 0.5;
      ctx.beginPath();
      ctx.moveTo(PAD.left, y);
      ctx.lineTo(PAD.left + plotW, y);
      ctx.stroke();
      ctx.fillText(fmt(v), PAD.left - 6, y);
    }
    // Time labels on whole minutes, every two minutes.
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const firstMinute = Math.ceil(win.start / 60) * 60;
    for (let t = firstMinute; t <= win.end; t += 60) {
      if ((t / 60) % 2 !== 0) continue;
      const x = PAD.left + ((t - win.start + 0.5) / SERIES_SECONDS) * plotW;
      const d = new Date(t * 1000);
      const label = window.toolgateFormat.time(d, d).slice(0, 5); // HH:MM
      // Keep the label inside the canvas near the edges.
      const half = ctx.measureText(label).width / 2;
      ctx.fillText(label, Math.min(Math.max(x, PAD.left + half), w - half - 1), PAD.top + plotH + 4);
    }
    return { plotW, plotH };
  }

  function drawHoverLine(ctx, t, win, plotW, plotH) {
    if (t == null || t < win.start || t > win.end) return;
    const x = Math.round(PAD.left + ((t - win.start + 0.5) / SERIES_SECONDS) * plotW) + 0.5;
    ctx.strokeStyle = cssVar('--muted');
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(x, PAD.top);
    ctx.lineTo(x, PAD.top + plotH);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  function drawDecisionsChart() {
    const canvas = $('dec-chart');
    const { ctx, w, h: hgt } = prepareCanvas(canvas);
    const win = timeWindow();
    let max = 0;
    let sum = { allow: 0, block: 0, escalate: 0 };
    for (let t = win.start; t <= win.end; t++) {
      const b = S.series.get(t);
      if (!b) continue;
      max = Math.max(max, (b.allow || 0) + (b.block || 0) + (b.escalate || 0));
      for (const k of DECISIONS) sum[k] += b[k] || 0;
    }
    const scale = niceScale(max);
    const { plotW, plotH } = drawGrid(ctx, w, hgt, scale, (v) => fmtNum(v), win);
    const bw = plotW / SERIES_SECONDS;
    const colors = { allow: cssVar('--allow'), escalate: cssVar('--escalate'), block: cssVar('--block') };
    // Stack bottom-up: allow, escalate, block. One path per colour is much
    // cheaper than a fill per rectangle.
    for (const [k, below] of [['allow', []], ['escalate', ['allow']], ['block', ['allow', 'escalate']]]) {
      ctx.beginPath();
      for (let t = win.start; t <= win.end; t++) {
        const b = S.series.get(t);
        if (!b || !b[k]) continue;
        const base = below.reduce((s, key) => s + (b[key] || 0), 0);
        const x = PAD.left + (t - win.start) * bw;
        const y0 = PAD.top + plotH - (base / scale.max) * plotH;
        const y1 = PAD.top + plotH - ((base + b[k]) / scale.max) * plotH;
        ctx.rect(x, y1, Math.max(bw - (bw > 3 ? 1 : 0), 1), y0 - y1);
      }
      ctx.fillStyle = colors[k];
      ctx.fill();
    }
    if (max === 0) drawNoData(ctx, w, plotH, 'No decisions in the last 10 minutes');
    drawHoverLine(ctx, S.hover.dec, win, plotW, plotH);

    const readout = $('dec-readout');
    const ht = S.hover.dec;
    if (ht != null) {
      const b = S.series.get(ht) || {};
      readout.textContent = `${fmtRowTime(ht * 1000)}  allow ${b.allow || 0} · escalate ${b.escalate || 0} · block ${b.block || 0}`;
    } else {
      readout.textContent = `10 min: ${fmtNum(sum.allow)} allow · ${fmtNum(sum.escalate)} escalate · ${fmtNum(sum.block)} block`;
    }
  }

  function drawLatencyChart() {
    const canvas = $('lat-chart');
    const { ctx, w, h: hgt } = prepareCanvas(canvas);
    const win = timeWindow();
    let max = 0;
    for (let t = win.start; t <= win.end; t++) {
      const b = S.series.get(t);
      if (b) max = Math.max(max, b.p99_us || 0, b.p50_us || 0);
    }
    const scale = niceScale(max);
    const { plotW, plotH } = drawGrid(ctx, w, hgt, scale, (v) => (v === 0 ? '0' : fmtMicrosShort(v)), win);
    const bw = plotW / SERIES_SECONDS;
    const yOf = (v) => PAD.top + plotH - (v / scale.max) * plotH;
    const xOf = (t) => PAD.left + (t - win.start + 0.5) * bw;

    // Seconds without checks have no latency: a point is drawn for every
    // second that had checks, joined to the previous one unless more than
    // a minute lies between (light traffic still reads as a line).
    const line = (key, color, width) => {
      const points = [];
      for (let t = win.start; t <= win.end; t++) {
        const b = S.series.get(t);
        const v = b && b[key];
        if (v > 0) points.push([t, v]);
      }
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = width;
      ctx.lineJoin = 'round';
      ctx.lineCap = 'round';
      ctx.beginPath();
      points.forEach(([t, v], i) => {
        const joined = i > 0 && t - points[i - 1][0] <= 60;
        if (joined) ctx.lineTo(xOf(t), yOf(v));
        else ctx.moveTo(xOf(t), yOf(v));
      });
      ctx.stroke();
      for (const [t, v] of points) {
        ctx.beginPath();
        ctx.arc(xOf(t), yOf(v), 2.5, 0, 2 * Math.PI);
        ctx.fill();
      }
    };
    line('p99_us', cssVar('--p99'), 2);
    line('p50_us', cssVar('--p50'), 2);
    if (max === 0) drawNoData(ctx, w, plotH, 'No checks in the last 10 minutes');
    ctx.lineWidth = 1;
    drawHoverLine(ctx, S.hover.lat, win, plotW, plotH);

    const readout = $('lat-readout');
    const ht = S.hover.lat;
    if (ht != null) {
      const b = S.series.get(ht) || {};
      readout.textContent = `${fmtRowTime(ht * 1000)}  p50 ${fmtMicros(b.p50_us)} · p99 ${fmtMicros(b.p99_us)}`;
    } else {
      const last = lastNonEmpty();
      readout.textContent = last ? `last: p50 ${fmtMicros(last.p50_us)} · p99 ${fmtMicros(last.p99_us)}` : '';
    }
  }

  function lastNonEmpty() {
    for (let t = S.latestT; t > S.latestT - SERIES_SECONDS; t--) {
      const b = S.series.get(t);
      if (b && b.p50_us > 0) return b;
    }
    return null;
  }

  function drawNoData(ctx, w, plotH, text) {
    ctx.fillStyle = cssVar('--faint');
    ctx.font = `12px ${cssVar('--sans') || 'sans-serif'}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(text, PAD.left + (w - PAD.left - PAD.right) / 2, PAD.top + plotH / 2);
  }

  /** Hovering a chart shows that second's numbers in its header. */
  function bindChartHover(canvas, key) {
    canvas.addEventListener('mousemove', (ev) => {
      const rect = canvas.getBoundingClientRect();
      const plotW = rect.width - PAD.left - PAD.right;
      const x = ev.clientX - rect.left - PAD.left;
      if (x < 0 || x > plotW) {
        S.hover[key] = null;
      } else {
        const win = timeWindow();
        S.hover[key] = win.start + Math.min(SERIES_SECONDS - 1, Math.floor((x / plotW) * SERIES_SECONDS));
      }
      queueDraw();
    });
    canvas.addEventListener('mouseleave', () => {
      S.hover[key] = null;
      queueDraw();
    });
  }

  /** Redraw on resize and when the pixel ratio changes (zoom, other monitor). */
  function watchCanvasSize() {
    if ('ResizeObserver' in window) {
      const ro = new ResizeObserver(() => queueDraw());
      ro.observe($('dec-chart'));
      ro.observe($('lat-chart'));
    }
    window.addEventListener('resize', queueDraw);
    const watchDpr = () => {
      const mq = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
      mq.addEventListener('change', () => {
        queueDraw();
        watchDpr();
      }, { once: true });
    };
    watchDpr();
  }

  // ---------------------------------------------------------------------------
  // Theme

  const THEMES = ['auto', 'light', 'dark'];

  const darkQuery = matchMedia('(prefers-color-scheme: dark)');

  /** Sets data-theme (the only switch the CSS knows); auto follows the system. */
  function applyTheme(theme) {
    const dark = theme === 'dark' || (theme !== 'light' && darkQuery.matches);
    document.documentElement.dataset.theme = dark ? 'dark' : 'light';
    $('theme-btn').textContent = `Theme: ${theme}`;
    queueDraw(); // chart colours come from CSS variables
  }

  function cycleTheme() {
    const cur = localStorage.getItem(THEME_KEY) || 'auto';
    const next = THEMES[(THEMES.indexOf(cur) + 1) % THEMES.length];
    localStorage.setItem(THEME_KEY, next);
    applyTheme(next);
  }

  // ---------------------------------------------------------------------------
  // Wiring

  function init() {
    applyTheme(localStorage.getItem(THEME_KEY) || 'auto');
    darkQuery.addEventListener('change', () => applyTheme(localStorage.getItem(THEME_KEY) || 'auto'));

    $('login-form').addEventListener('submit', onLoginSubmit);
    $('signout-btn').addEventListener('click', () => signOut('Signed out.'));
    $('theme-btn').addEventListener('click', cycleTheme);
    $('notify-btn').addEventListener('click', toggleNotify);
    renderNotifyButton();
    $('audit-btn').addEventListener('click', verifyAudit);
    $('older-btn').addEventListener('click', loadOlder);

    $('filters').addEventListener('submit', (ev) => ev.preventDefault());
    $('f-decision').addEventListener('change', onFiltersChanged);
    $('f-risk').addEventListener('change', onFiltersChanged);
    $('f-tool').addEventListener('input', onFiltersChanged);
    $('f-clear').addEventListener('click', () => {
      $('f-decision').value = '';
      $('f-risk').value = '';
      $('f-tool').value = '';
      onFiltersChanged();
    });

    // One listener for every row, present and future.
    const body = $('feed-body');
    body.addEventListener('click', (ev) => {
      const row = ev.target.closest('tr.row');
      if (row && !window.getSelection().toString()) toggleRow(row);
    });
    body.addEventListener('keydown', (ev) => {
      const row = ev.target.closest('tr.row');
      if (row && (ev.key === 'Enter' || ev.key === ' ')) {
        ev.preventDefault();
        toggleRow(row);
      }
    });

    bindChartHover($('dec-chart'), 'dec');
    bindChartHover($('lat-chart'), 'lat');
    watchCanvasSize();

    const signin = /^#signin\/([0-9a-f]{64})$/.exec(location.hash);
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (signin) signInWithCode(signin[1]);
    else if (token) start(token, null);
    else resumeSession();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
