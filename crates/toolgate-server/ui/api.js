// The daemon's HTTP API as the control UI uses it: the shapes of the JSON it
// answers (docs/http-api.md, the contract this UI follows) and api(), the
// one function that calls it, with the operator token or the session cookie.
// A 401 on the signed-in credentials is reported to the handler session.js
// sets (back to the sign-in screen).

import { S } from './state.js';

/** @import { KnowledgeState, Integration, Posture } from './panels.js' */

/** @typedef {'allow' | 'block' | 'escalate'} Decision */
/** @typedef {'pending' | 'approved' | 'denied' | 'consumed' | 'expired'} ApprovalState */

/**
 * A tool call as the agent sent it (redacted by the daemon).
 * @typedef {Object} ToolCall
 * @property {string} [tool]
 * @property {Record<string, unknown>} [params]
 * @property {string} [session]
 * @property {string} [agent]
 * @property {string} [cwd]
 * @property {Requester | string | null} [requester]
 */

/**
 * @typedef {Object} Requester
 * @property {string} [id]
 * @property {string} [role]
 */

/**
 * One entry of `GET /v1/decisions` (and of a `decision` event on /ws).
 * @typedef {Object} DecisionRecord
 * @property {number} seq audit sequence number
 * @property {string} [ts] RFC 3339
 * @property {string} [trace]
 * @property {string} [tool]
 * @property {Decision | string} [decision]
 * @property {'allow' | 'hold' | 'escalate' | 'block' | null} [outcome] how a person reads it: a knowledge hold is `hold`
 * @property {string} [risk] "R0".."R4"
 * @property {number} [score]
 * @property {string} [layer]
 * @property {string} [reason]
 * @property {string | null} [approval] approval id
 * @property {string | null} [agent]
 * @property {string | null} [session]
 * @property {string | null} [summary] what the call does, one redacted line (null before 0.1)
 * @property {ToolCall} [call]
 */

/**
 * `GET /v1/decisions`.
 * @typedef {Object} DecisionsPage
 * @property {DecisionRecord[]} [decisions]
 * @property {number | null} [next_before] pass as `before` for the next older page
 */

/**
 * @typedef {Object} Quorum
 * @property {number} [min_approvals]
 * @property {boolean} [require_user]
 * @property {string[]} [approvers]
 * @property {string[]} [operators]
 */

/**
 * @typedef {Object} Vote
 * @property {string} [identity]
 * @property {boolean} approve
 * @property {string | null} [reason]
 * @property {string} [kind]
 * @property {string | null} [channel]
 * @property {boolean} [relayed]
 * @property {number} [at_ms]
 * @property {number} [generation]
 * @property {boolean} [current] false: cast on an earlier version
 */

/**
 * Why an approval was asked for: one escalating or blocking finding.
 * @typedef {Object} Finding
 * @property {string} [layer]
 * @property {string} [verdict]
 * @property {string} [risk]
 * @property {string} [reason]
 * @property {string} [rule]
 * @property {string} [command] the sub-command it is about, as the analyzer read it
 */

/**
 * Where an approval request was sent, and how that stands.
 * @typedef {Object} Delivery
 * @property {string} [name]
 * @property {string} [kind]
 * @property {string} [target]
 * @property {string} [phase]
 * @property {{state?: 'pending' | 'delivered' | 'retrying' | 'failed', error?: string | null}} [state]
 * @property {number} [attempts]
 */

/**
 * `GET /v1/approvals` entries and `GET /v1/approvals/{id}`.
 * @typedef {Object} ApprovalView
 * @property {string} id
 * @property {string} [binding]
 * @property {ApprovalState | string} [state]
 * @property {string} [risk]
 * @property {string} [reason]
 * @property {string} [summary]
 * @property {ToolCall} [call]
 * @property {Requester | string | null} [requester]
 * @property {string | null} [session]
 * @property {string | null} [agent]
 * @property {string | null} [cwd]
 * @property {Quorum} [quorum]
 * @property {number} [created_ms]
 * @property {number} [expires_ms]
 * @property {number} [window_ms]
 * @property {number} [generation]
 * @property {number | null} [usable_until_ms]
 * @property {number | null} [resolved_ms]
 * @property {string | null} [resolution]
 * @property {Finding[]} [findings]
 * @property {number} [have]
 * @property {number} [need]
 * @property {Vote[]} [votes]
 * @property {number} [waiting_until_ms] while an agent waits on it
 * @property {Delivery[]} [deliveries]
 */

/**
 * `POST /v1/approvals/{id}/approve` and `…/deny`.
 * @typedef {Object} VoteResult
 * @property {'approved' | 'recorded' | 'denied' | string} [outcome]
 * @property {number} [have]
 * @property {number} [need]
 * @property {number | null} [usable_until_ms]
 * @property {ApprovalView} [approval]
 */

/**
 * `GET /v1/whoami`.
 * @typedef {Object} WhoAmI
 * @property {string} identity
 * @property {string} [role]
 * @property {boolean} [person] a named operator's own token
 */

/**
 * One second of decisions: `/v1/state` `series` and the `stats` event.
 * @typedef {Object} Bucket
 * @property {number} t Unix seconds
 * @property {number} [allow]
 * @property {number} [hold] knowledge holds (not in `block`)
 * @property {number} [block]
 * @property {number} [escalate]
 * @property {number} [p50_us]
 * @property {number} [p99_us]
 */

/**
 * An emergency bypass (`/v1/state` `bypasses`, the `bypass` event).
 * @typedef {Object} Bypass
 * @property {string} [id]
 * @property {string[]} [layers]
 * @property {string} [reason]
 * @property {string} [by]
 * @property {number} [started_ms]
 * @property {number} [until_ms]
 */

/**
 * `GET /v1/state`.
 * @typedef {Object} DaemonState
 * @property {string} [version]
 * @property {string} [started] RFC 3339
 * @property {number} [uptime_s]
 * @property {string} [listen]
 * @property {string} [store]
 * @property {{origin?: string, loaded?: string, reloads?: number, last_error?: string | null, sources?: string[], watched?: string[]}} [policy]
 * @property {{length?: number, head_hash?: string}} [audit]
 * @property {number} [pending_approvals]
 * @property {{allow?: number, hold?: number, block?: number, escalate?: number}} [totals]
 * @property {Bucket[]} [series] the last 10 minutes, oldest first
 * @property {Bypass[]} [bypasses]
 * @property {Integration[]} [integrations]
 * @property {KnowledgeState} [knowledge]
 * @property {Posture} [posture]
 * @property {{mode?: string, targets?: Array<{name?: string, kind?: string, ready?: boolean, error?: string | null}>}} [routing] approval channels
 */

/**
 * `GET /v1/audit/verify`: `{ok: true, entries, head_seq, head_hash}` or
 * `{ok: false, seq, why}`.
 * @typedef {Object} AuditVerify
 * @property {boolean} ok
 * @property {number} [entries]
 * @property {number | null} [head_seq]
 * @property {string} [head_hash]
 * @property {number | null} [seq]
 * @property {string} [why]
 */

/** An error answer, or no answer: `status` 0 when the daemon was not reached. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * The HTTP status of an error from api(), if it is one.
 * @param {unknown} e
 * @returns {number | undefined}
 */
export const statusOf = (e) => (e instanceof ApiError ? e.status : undefined);

/**
 * The message of anything caught.
 * @param {unknown} e
 * @returns {string}
 */
export const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/** @type {(message: string) => void} */
let unauthorizedHandler = () => {};

/**
 * Sets what happens when the daemon refuses the signed-in credentials.
 * @param {(message: string) => void} fn
 */
export function onUnauthorized(fn) {
  unauthorizedHandler = fn;
}

/**
 * The daemon refused the signed-in credentials (here, or on the socket).
 * @param {string} message
 */
export function unauthorized(message) {
  unauthorizedHandler(message);
}

/**
 * Calls the daemon with the operator token. A 401 on the signed-in token
 * means it was rotated or the daemon restarted with another one: back to
 * the sign-in screen, saying so. The caller names the answer's shape.
 * @template [T=unknown]
 * @param {string} path relative to the page, e.g. `v1/state`
 * @param {{method?: string, body?: unknown, token?: string | null}} [options]
 *   `token` null: the session cookie signs the request in
 * @returns {Promise<T>}
 */
export async function api(path, { method = 'GET', body, token = S.token } = {}) {
  // The channel is recorded on votes cast from here.
  // Without a token the browser's session cookie signs the request in;
  // X-Toolgate-Channel is what tells the daemon it is this page's.
  /** @type {Record<string, string>} */
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
    throw new ApiError(0, 'network', `Cannot reach the toolgate daemon (${messageOf(e)}).`);
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
      unauthorized(S.token ? `The daemon no longer accepts this token (401: ${e.message}). Sign in again.` : e.message);
    }
    throw e;
  }
  return data;
}
