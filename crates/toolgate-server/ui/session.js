// Signing in and out: the sign-in screen (an operator token, kept in this
// tab's sessionStorage), a one-time #signin/<code> link from `toolgate ui`
// (an HttpOnly session cookie for the whole browser), resuming a cookie
// session, and starting and stopping everything a signed-in page runs:
// the socket, the first loads and the polls.

import { api, messageOf, onUnauthorized, statusOf } from './api.js';
import { clearApprovals, refreshApprovals, updateCountdowns } from './approvals.js';
import { verifyAudit } from './audit.js';
import { drawCharts } from './charts.js';
import { applyState, loadState, renderUptime } from './daemon.js';
import { $ } from './dom.js';
import { clearFeed, loadInitialDecisions, readFiltersFromForm } from './feed.js';
import { closeWs, connectWs, watchSocket } from './live.js';
import { S, TOKEN_KEY, resetState } from './state.js';
import { clearToasts } from './toasts.js';

/** @import { DaemonState, WhoAmI } from './api.js' */

const APPROVALS_POLL_MS = 5000;
const STATE_POLL_MS = 10000;
const AUDIT_POLL_MS = 60000;

/**
 * The sign-in screen, with a message above the token box if there is one.
 * @param {string} [message]
 */
function showLogin(message) {
  $('app').hidden = true;
  $('login').hidden = false;
  const err = $('login-error');
  err.hidden = !message;
  err.textContent = message || '';
  const input = $('login-token', HTMLInputElement);
  input.value = '';
  input.focus();
}

/**
 * The sign-in form: checks the token with the daemon before keeping it.
 * @param {SubmitEvent} ev
 */
async function onLoginSubmit(ev) {
  ev.preventDefault();
  const token = $('login-token', HTMLInputElement).value.trim();
  const err = $('login-error');
  if (!token) {
    err.hidden = false;
    err.textContent = 'Enter the operator token.';
    return;
  }
  const button = $('login-submit', HTMLButtonElement);
  button.disabled = true;
  button.textContent = 'Checking…';
  try {
    // Validate before storing: the state endpoint needs the operator role.
    /** @type {DaemonState} */
    const state = await api('v1/state', { token });
    sessionStorage.setItem(TOKEN_KEY, token);
    start(token, state);
  } catch (e) {
    err.hidden = false;
    const status = statusOf(e);
    if (status === 401) err.textContent = `That token was not accepted (401). ${messageOf(e)}`;
    else if (status === 403) err.textContent = 'That is not an operator token (403): the agent token cannot use the control UI.';
    else err.textContent = messageOf(e);
    $('login-token', HTMLInputElement).select();
  } finally {
    button.disabled = false;
    button.textContent = 'Sign in';
  }
}

/**
 * Forgets the token (or ends the cookie session) and shows the sign-in screen.
 * @param {string} [message]
 */
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
 * @param {string} code
 */
async function signInWithCode(code) {
  // The code works once: out of the address bar and the history at once.
  history.replaceState(null, '', location.pathname + location.search);
  try {
    await api('v1/session', { method: 'POST', body: { code }, token: null });
    start(null, null);
  } catch (e) {
    showLogin(messageOf(e));
  }
}

/** Resumes a cookie session if this browser has one; else the sign-in page. */
async function resumeSession() {
  try {
    await api('v1/whoami', { token: null });
    start(null, null);
  } catch (e) {
    const status = statusOf(e);
    showLogin(status === 401 || status === 403 ? '' : messageOf(e));
  }
}

/** Stops timers and the socket and forgets everything loaded. */
function stop() {
  const epoch = S.epoch + 1;
  for (const t of S.timers) clearInterval(t);
  clearTimeout(S.debounce);
  clearTimeout(S.stateDebounce);
  closeWs();
  resetState(epoch);
  clearFeed();
  clearApprovals();
  clearToasts();
  document.title = 'toolgate';
}

/**
 * Shows the dashboard and starts loading and listening.
 * @param {string | null} token null: signed in by the session cookie
 * @param {DaemonState | null} initialState the state already read, if it was
 */
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

/**
 * Shows who votes cast here count as: the person whose token signed in,
 * or "operator" (the administrator) for the shared operator token.
 */
async function showWhoami() {
  const el = $('whoami');
  try {
    /** @type {WhoAmI} */
    const me = await api('v1/whoami');
    el.textContent = me.identity;
    S.me = me.identity;
    $('signed-in-as').title = me.person
      ? `Signed in with ${me.identity}'s own token: votes are recorded as ${me.identity}.`
      : 'Signed in with the shared operator token: votes are recorded as the administrator ("operator"), which counts only below R4 where one approval is enough: R4 calls, and any quorum of two, need named operators. Give each approver a token of their own with `toolgate operators add NAME`.';
  } catch (e) {
    el.textContent = '?';
  }
}

/** The sign-in form, the Sign out button and what a 401 does; once, at start. */
export function bindSession() {
  // A refused credential mid-session is said out loud, with the way back:
  // sign-in sessions live in the daemon's memory, so a restart ends them.
  onUnauthorized((why) =>
    signOut(`Your session ended: the daemon restarted, or the sign-in expired or was revoked (${why}). Run \`toolgate ui\` on the daemon's machine for a fresh sign-in link, or sign in with a token below.`),
  );
  $('login-form').addEventListener('submit', onLoginSubmit);
  $('signout-btn').addEventListener('click', () => signOut('Signed out.'));
}

/**
 * Signs in as the page was opened: with a #signin/<code> link, the token
 * this tab kept, or a cookie session this browser has; else the sign-in
 * screen.
 */
export function begin() {
  const signin = /^#signin\/([0-9a-f]{64})$/.exec(location.hash);
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (signin) signInWithCode(signin[1]);
  else if (token) start(token, null);
  else resumeSession();
}
