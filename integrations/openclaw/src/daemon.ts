/**
 * The HTTP client for `toolgate serve` (docs/http-api.md). The plugin is
 * thin: every decision is the daemon's. This module only moves JSON and
 * refuses answers it cannot read, so the caller can fail closed.
 */

import { readToken, type Settings } from "./config.js";

/** A ToolCall as the daemon reads it (docs/http-api.md, "ToolCall and Decision"). */
export interface ToolCall {
  tool: string;
  params: Record<string, unknown>;
  call_id?: string;
  agent?: string;
  session?: string;
  channel?: string;
  cwd?: string;
  requester?: { id?: string; role?: string };
}

/** The pending approval an escalation created. */
export interface ApprovalRef {
  id: string;
  expires_at?: string;
  min_approvals?: number;
  approve_url?: string;
}

/** The daemon's answer (the fields the plugin uses; others are kept). */
export interface Decision {
  decision: "allow" | "block" | "escalate";
  risk?: string;
  reason: string;
  block_reason?: string;
  approval?: ApprovalRef;
  context?: string;
  params?: Record<string, unknown>;
  audit_seq?: number;
}

/** What the plugin reports to `POST /v1/canary`. */
export type CanaryEvent = "start" | "activity" | "hook" | "tamper";

/** Why the daemon could not give an answer; `message` says it for a person. */
export class DaemonError extends Error {
  override name = "DaemonError";
}

/** Longest answer body read: a Decision is small; anything bigger is wrong. */
const MAX_BODY = 4 * 1024 * 1024;

/** A client of one daemon. */
export class Daemon {
  constructor(private readonly settings: Settings) {}

  /** Where the daemon is (for messages). */
  get url(): string {
    return this.settings.url;
  }

  /**
   * `POST /v1/check`: the daemon's decision for `call`. With `waitSeconds`
   * an escalation is held until an operator decides. Throws
   * {@link DaemonError} on anything but a well-formed Decision.
   */
  async check(call: ToolCall, opts: { waitSeconds?: number; signal?: AbortSignal } = {}): Promise<Decision> {
    const wait = opts.waitSeconds;
    const path = wait ? `/v1/check?wait=${wait}s` : "/v1/check";
    // The wait is the daemon's; our own budget covers the rest of the exchange.
    const budget = this.settings.timeoutMs + (wait ? wait * 1000 : 0);
    const body = await this.request("POST", path, call, budget, opts.signal);
    return parseDecision(body);
  }

  /** `GET /v1/protocol`: the rules text for the agent's system prompt. */
  async protocol(timeoutMs: number): Promise<string> {
    const text = await this.requestText("GET", "/v1/protocol", undefined, timeoutMs);
    if (text.trim() === "") throw new DaemonError("the daemon sent an empty protocol text");
    return text;
  }

  /** `POST /v1/canary`. Throws like the others; callers treat it as best-effort. */
  async canary(report: { runtime: string; instance: string; event: CanaryEvent; detail?: string }, timeoutMs: number): Promise<void> {
    await this.request("POST", "/v1/canary", report, timeoutMs);
  }

  private async request(method: string, path: string, json: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    const text = await this.requestText(method, path, json, timeoutMs, signal);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new DaemonError(`${method} ${path} answered with something that is not JSON: ${snippet(text)}`);
    }
  }

  private async requestText(method: string, path: string, json: unknown, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    const token = readToken(this.settings);
    const timeout = AbortSignal.timeout(timeoutMs);
    const abort = signal ? AbortSignal.any([timeout, signal]) : timeout;
    let res: Response;
    try {
      res = await fetch(this.settings.url + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(json === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
        signal: abort,
        redirect: "error",
      });
    } catch (e) {
      if (timeout.aborted) throw new DaemonError(`${this.settings.url} did not answer within ${timeoutMs} ms`);
      if (signal?.aborted) throw new DaemonError("the tool call was cancelled while toolgate was checking it");
      throw new DaemonError(`cannot reach toolgate at ${this.settings.url}: ${causeOf(e)} (is \`toolgate serve\` running?)`);
    }
    let text: string;
    try {
      text = await readCapped(res, MAX_BODY);
    } catch (e) {
      if (timeout.aborted) throw new DaemonError(`${this.settings.url} did not finish answering within ${timeoutMs} ms`);
      throw new DaemonError(`reading toolgate's answer failed: ${causeOf(e)}`);
    }
    if (res.status !== 200) {
      let detail = snippet(text);
      try {
        const err = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
        if (err?.message) detail = `${err.code ?? "error"}: ${err.message}`;
      } catch {
        // not JSON: the snippet says it
      }
      const hint = res.status === 401 ? ` (token from ${this.settings.token.source})` : "";
      throw new DaemonError(`${method} ${path} answered HTTP ${res.status}: ${detail}${hint}`);
    }
    return text;
  }
}

/** Reads `res`'s body, refusing more than `max` bytes. */
async function readCapped(res: Response, max: number): Promise<string> {
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) throw new Error(`answer larger than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A Decision out of untrusted JSON: the verdict must be one of the three
 * and the fields used must have their types; otherwise a DaemonError (and
 * the caller blocks).
 */
export function parseDecision(body: unknown): Decision {
  if (!isRecord(body)) throw new DaemonError("toolgate's answer is not a JSON object");
  const verdict = body.decision;
  if (verdict !== "allow" && verdict !== "block" && verdict !== "escalate") {
    throw new DaemonError(`toolgate's answer has no valid decision: ${snippet(JSON.stringify(body))}`);
  }
  if (typeof body.reason !== "string") throw new DaemonError("toolgate's answer has no reason");
  for (const key of ["risk", "block_reason", "context"] as const) {
    if (body[key] !== undefined && body[key] !== null && typeof body[key] !== "string") {
      throw new DaemonError(`toolgate's answer has a malformed ${key}`);
    }
  }
  if (body.params !== undefined && body.params !== null && !isRecord(body.params)) {
    throw new DaemonError("toolgate's answer has malformed params");
  }
  let approval: ApprovalRef | undefined;
  if (body.approval !== undefined && body.approval !== null) {
    if (!isRecord(body.approval) || typeof body.approval.id !== "string" || body.approval.id === "") {
      throw new DaemonError("toolgate's answer has a malformed approval");
    }
    approval = body.approval as unknown as ApprovalRef;
  }
  const d: Decision = { decision: verdict, reason: body.reason };
  if (typeof body.risk === "string") d.risk = body.risk;
  if (typeof body.block_reason === "string") d.block_reason = body.block_reason;
  if (typeof body.context === "string") d.context = body.context;
  if (isRecord(body.params)) d.params = body.params;
  if (approval) d.approval = approval;
  if (typeof body.audit_seq === "number") d.audit_seq = body.audit_seq;
  return d;
}

/** A plain JSON object (not an array, not null). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function causeOf(e: unknown): string {
  // fetch wraps the socket error: the cause names it (ECONNREFUSED …).
  const err = e as { cause?: { code?: string; message?: string }; message?: string };
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

function snippet(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 200 ? `${t.slice(0, 200)}…` : t || "(empty)";
}
