// The live feed over /ws: connecting (the token as the first message, or
// the session cookie with the handshake), the connection indicator,
// reconnecting with backoff, replacing a silent socket, catching up on
// what was missed, and handing each event to the module that owns it.

import { unauthorized } from './api.js';
import { onApprovalEvent, refreshApprovals } from './approvals.js';
import { onStats } from './charts.js';
import { loadState, onPolicyEvent, renderBypasses } from './daemon.js';
import { $ } from './dom.js';
import { catchUpDecisions, onDecisionEvent } from './feed.js';
import { S } from './state.js';

/** @import { Bucket, Bypass, DecisionRecord } from './api.js' */
/** @import { PolicyEvent } from './daemon.js' */

const WS_SILENCE_MS = 7000; // stats arrive every second; this much silence means a dead socket

/**
 * One message on /ws (docs/http-api.md, `GET /ws`). `lagged` is sent when
 * this client fell behind and events were dropped for it.
 * @typedef {{type: 'hello', version?: string}
 *   | ({type: 'decision'} & DecisionRecord)
 *   | {type: 'approval', event?: string, id?: string, state?: string, seq?: number}
 *   | PolicyEvent
 *   | ({type: 'stats'} & Bucket)
 *   | {type: 'bypass', active?: Bypass[]}
 *   | {type: 'lagged', missed?: number}} LiveEvent
 */

/**
 * The indicator in the top bar.
 * @param {'connecting' | 'live' | 'waiting'} state
 * @param {string} text
 */
function setConn(state, text) {
  const el = $('conn');
  el.dataset.state = state;
  $('conn-label').textContent = text;
}

/** @returns {string} this page's /ws, ws: or wss: as the page is http: or https: */
function wsUrl() {
  const url = new URL('ws', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

/** Opens the socket (replacing any pending reconnect). */
export function connectWs() {
  clearTimeout(S.wsTimer);
  clearInterval(S.wsCountdown);
  setConn('connecting', S.everConnected ? 'Reconnecting…' : 'Connecting…');
  /** @type {WebSocket} */
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
    /** @type {LiveEvent | null} */
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
      unauthorized(S.token ? 'The daemon refused this token on the live feed (4401). Sign in again.' : 'This browser\'s session ended (4401): sign in again with a link from `toolgate ui`.');
      return;
    }
    scheduleReconnect();
  };
}

/** @param {{version?: string}} msg */
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
export function watchSocket() {
  if (S.ws && S.ws.readyState === WebSocket.OPEN && Date.now() - S.wsLastMessage > WS_SILENCE_MS) {
    const ws = S.ws;
    S.ws = null;
    ws.close(4000, 'silent');
    scheduleReconnect();
  }
}

/** @param {LiveEvent} msg */
function onEvent(msg) {
  switch (msg.type) {
    case 'decision':
      onDecisionEvent(msg);
      break;
    case 'approval':
      onApprovalEvent();
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
      // This client fell behind and events were dropped for it: re-fetch
      // instead.
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

/** Stops the socket and any reconnect (signing out). */
export function closeWs() {
  clearTimeout(S.wsTimer);
  clearInterval(S.wsCountdown);
  if (S.ws) {
    const ws = S.ws;
    S.ws = null; // onclose sees it is no longer current and does not reconnect
    ws.close(1000, 'signed out');
  }
}
