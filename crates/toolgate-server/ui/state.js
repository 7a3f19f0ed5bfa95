// The control UI's state: everything loaded from the daemon and every timer
// and socket of the signed-in session, in one object (S) so that signing
// out resets all of it at once, plus the constants the modules share.

/** @import { ApprovalView, Bucket, DaemonState, DecisionRecord } from './api.js' */

export const TOKEN_KEY = 'toolgate.operatorToken'; // sessionStorage: dies with the tab
export const SERIES_SECONDS = 600; // the charts show 10 minutes of 1-second buckets
export const PAGE = 100; // decisions loaded at start and per "older" click
export const MAX_RECORDS = 2000; // live rows kept in memory before the oldest are dropped

/**
 * The decision filters of the feed ('' = any).
 * @typedef {{decision: string, tool: string, risk: string}} Filters
 */

/**
 * How far back the records held for one filter reach.
 * @typedef {{done: true, before?: undefined} | {done: false, before: number}} Cursor
 */

/** @typedef {{kind: 'ok' | 'info' | 'error', text: string}} Message */

function freshState() {
  return {
    /** @type {string | null} */
    token: null,
    signedIn: false, // by token (token set) or by the session cookie (token null)
    epoch: 0, // bumped on sign-in/out so late answers from an old session are dropped
    /** @type {Map<number, DecisionRecord>} audit seq -> record */
    records: new Map(),
    /** @type {number[]} seqs, newest first */
    order: [],
    maxSeq: -1,
    // Paging cursors per filter ('' = unfiltered): {before, done}. We hold
    // every record matching a filter from its cursor up to the newest.
    /** @type {Map<string, Cursor>} */
    cursors: new Map(),
    /** @type {Filters} */
    filters: { decision: '', tool: '', risk: '' },
    /** @type {Set<number>} seqs whose JSON is open */
    expanded: new Set(),
    /** @type {DecisionRecord[]} decision events waiting for the next animation frame */
    pendingLive: [],
    liveOverflow: false, // some queued events were dropped (hidden tab)
    /** @type {ApprovalView[]} most urgent first */
    approvals: [],
    /** @type {Map<string, string[]>} lead approval id -> ids of the identical calls it stands for */
    groups: new Map(),
    /** @type {Map<string, string>} approval id -> its group's lead */
    leadOf: new Map(),
    /** @type {Map<string, Message>} approval id -> its message, survives re-renders */
    approvalMsgs: new Map(),
    approvalsInFlight: false,
    approvalsAgain: false,
    /** @type {Map<number, Bucket>} Unix second -> bucket */
    series: new Map(),
    latestT: 0,
    /** @type {DaemonState | null} last GET /v1/state */
    server: null,
    serverAt: 0, // Date.now() when it arrived (uptime ticks locally)
    approvalsLoaded: false, // S.approvals came from the daemon at least once
    /** @type {string | null} the identity votes cast here are recorded as (GET /v1/whoami) */
    me: null,
    totals: { allow: 0, hold: 0, block: 0, escalate: 0 },
    totalsFrom: Infinity, // stats buckets from this second on are not in the totals yet
    /** @type {Set<string>} tool names seen, offered in the filter box */
    tools: new Set(),
    /** @type {WebSocket | null} */
    ws: null,
    wsAttempt: 0,
    wsTimer: 0,
    wsCountdown: 0, // ticks the "retrying in N s" text
    wsLastMessage: 0,
    everConnected: false,
    /** @type {number[]} intervals */
    timers: [],
    debounce: 0,
    stateDebounce: 0,
    drawQueued: false,
    /** @type {{dec: number | null, lat: number | null}} hovered Unix second per chart */
    hover: { dec: null, lat: null },
  };
}

/** @typedef {ReturnType<typeof freshState>} State */

/** The state of the session shown now; replaced whole by resetState(). */
export let S = freshState();

/**
 * Forgets everything (timers and the socket must be stopped first).
 * @param {number} epoch the new session's epoch
 */
export function resetState(epoch) {
  S = freshState();
  S.epoch = epoch;
}

/**
 * Wraps fn to run only if the session that started it is still signed in.
 * @template {unknown[]} A
 * @template R
 * @param {(...args: A) => R} fn
 * @returns {(...args: A) => R | undefined}
 */
export function sameEpoch(fn) {
  const epoch = S.epoch;
  return (...args) => (epoch === S.epoch ? fn(...args) : undefined);
}

/**
 * How many approvals wait for a vote: one number for the tile, the inbox
 * and the daemon panel alike. The inbox's own list once it is loaded
 * (it is refreshed on every approval event); the daemon's count before.
 * @returns {number | null}
 */
export function pendingCount() {
  if (S.approvalsLoaded) return S.approvals.filter((a) => a.state === 'pending').length;
  return S.server && typeof S.server.pending_approvals === 'number' ? S.server.pending_approvals : null;
}
