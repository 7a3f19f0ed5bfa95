/**
 * The gate: `before_tool_call` asks the daemon and answers OpenClaw;
 * `after_tool_call` checks that what ran is what was judged.
 *
 * Invariants:
 * - No answer from the daemon is never an allow: unreachable, slow, refused,
 *   malformed — the call is blocked with a reason that says so.
 * - On allow, the handler returns the exact params it judged, so with
 *   toolgate running last (see runner.ts) those are the params that run.
 * - A `tool_call` (Tool Search bridge) is judged as the call it wraps, and
 *   sent to the daemon under the inner tool's name so its record shows the
 *   real tool.
 * - The relay and acknowledgement tools (`toolgate_approve`, `toolgate_ack`)
 *   are never sent to /v1/check by the gate: the daemon takes such a check
 *   as the relay or acknowledgement itself.
 */

import {
  bridgeKey,
  bridgeParentOf,
  canonicalJson,
  cloneParams,
  targetOf,
  toolCall,
  type Target,
} from "./calls.js";
import type { Canary } from "./canary.js";
import type { Settings } from "./config.js";
import { isRecord, type Daemon, type Decision, type ToolCall } from "./daemon.js";
import type {
  AfterToolCallEvent,
  AgentContext,
  ApprovalResolution,
  BeforeToolCallEvent,
  BeforeToolCallResult,
  Logger,
  ToolContext,
} from "./openclaw.js";
import { inspectRunner } from "./runner.js";
import { processWide } from "./shared.js";

/** The relay tool's name; the daemon treats a check of this tool as a relayed approval. */
export const APPROVE_TOOL = "toolgate_approve";
/** Every name the daemon takes as a relayed approval (`RELAY_TOOLS` in toolgate-store). */
const RELAY_TOOLS = [APPROVE_TOOL, "ga_approve"];
/** The acknowledgement tool's name; the daemon treats a check of this tool as acknowledged knowledge. */
export const ACK_TOOL = "toolgate_ack";
/** Every name the daemon takes as an acknowledgement (`ACK_TOOLS` in toolgate-store). */
const ACK_TOOLS = [ACK_TOOL];
/** Calls remembered between before and after (a bound: runs can be long). */
const MAX_TRACKED = 4096;

interface Judged {
  tool: string;
  canonical: string;
}

/** What the guard needs from its surroundings. */
export interface GuardDeps {
  pluginId: string;
  settings: Settings;
  daemon: Daemon;
  canary: Canary;
  logger: Logger;
  /** The agent's workspace dir from OpenClaw's config, when it can tell. */
  workspaceOf: (agentId: string) => string | undefined;
}

/**
 * What the gate remembers between hooks. OpenClaw may register the plugin
 * several times in one process (one registry per load purpose, and again on
 * reload), and `after_tool_call` need not reach the same registration as
 * `before_tool_call`: so this lives once per process, not per registration.
 */
const memory = processWide("guard", () => ({
  /** Allowed calls by run and call id: the canonical params judged, for `after_tool_call`. */
  judged: new Map<string, string>(),
  /** Bridge calls allowed, by {@link bridgeKey}: the inner call they may make. */
  bridges: new Map<string, Judged>(),
  /** Call ids the hook saw, whatever it answered. */
  seen: new Map<string, true>(),
  /** Workspace dirs seen in agent hooks, by run id and session key. */
  workspaces: new Map<string, string>(),
  /** The last finding about the runner's order ("" for none). */
  runnerFinding: "",
}));

/** One plugin registration's gate. */
export class Guard {
  private readonly judged = memory.judged;
  private readonly bridges = memory.bridges;
  private readonly seen = memory.seen;
  private readonly workspaces = memory.workspaces;

  constructor(private readonly deps: GuardDeps) {}

  /** An agent hook fired: the agent is active; note where it works. */
  noteAgent(ctx: AgentContext | undefined): void {
    this.deps.canary.activity();
    if (ctx?.workspaceDir) {
      if (ctx.runId) remember(this.workspaces, `run:${ctx.runId}`, ctx.workspaceDir);
      if (ctx.sessionKey) remember(this.workspaces, `session:${ctx.sessionKey}`, ctx.workspaceDir);
    }
    this.checkRunner();
  }

  /** The `before_tool_call` handler. */
  async beforeToolCall(event: BeforeToolCallEvent, ctx: ToolContext = {}): Promise<BeforeToolCallResult> {
    this.deps.canary.hook();
    this.checkRunner();
    const callId = event.toolCallId ?? ctx.toolCallId;
    const runId = event.runId ?? ctx.runId;
    if (callId) remember(this.seen, callId, true);
    // A copy: what toolgate judges must not change under it.
    const original = isRecord(event.params) ? cloneParams(event.params) : {};
    const target = targetOf(event.toolName, original);

    // The relay tool only talks to the daemon, which judges the relay itself
    // when the tool runs; checking it here would relay the approval twice.
    // Any other relay name is never sent to /v1/check either: the daemon
    // would take the check itself as a relayed approval, a side effect of a
    // call that may not even exist (e.g. through tool_call).
    if (RELAY_TOOLS.includes(target.tool)) {
      if (this.deps.settings.approveTool && target.tool === APPROVE_TOOL) return { params: original };
      return block(
        `toolgate: blocked: ${target.tool} would relay an approval to toolgate; ` +
          (target.tool === APPROVE_TOOL ? "relayed approvals are switched off here (approveTool: false)" : `use ${APPROVE_TOOL}`),
      );
    }
    // Likewise the acknowledgement tool: it asks the daemon itself when it
    // runs; a check here would already be the acknowledgement (twice, or for
    // a call that never runs).
    if (ACK_TOOLS.includes(target.tool)) {
      if (this.deps.settings.ackTool) return { params: original };
      return block(
        `toolgate: blocked: ${target.tool} would acknowledge knowledge in toolgate; acknowledging by tool is switched off here (ackTool: false). ` +
          "Retry exactly the same call to acknowledge what toolgate showed you.",
      );
    }

    // The call Tool Search's bridge makes for a `tool_call` toolgate already
    // allowed, with exactly the params judged: asking again would record the
    // call twice and, after an approval, find the approval already used.
    const parent = bridgeParentOf(callId, event.toolName);
    if (parent !== undefined) {
      const allowed = this.bridges.get(parent);
      if (allowed && allowed.tool === event.toolName && allowed.canonical === canonicalJson(original)) {
        this.bridges.delete(parent);
        this.track(runId, callId, original);
        return { params: original };
      }
    }

    const call = toolCall(target, event, ctx, { cwd: this.cwdOf(ctx) });
    let decision: Decision;
    try {
      decision = await this.deps.daemon.check(call, {
        ...(this.deps.settings.waitSeconds ? { waitSeconds: this.deps.settings.waitSeconds } : {}),
        ...(ctx.abortSignal ? { signal: ctx.abortSignal } : {}),
      });
    } catch (e) {
      const why = (e as Error)?.message ?? String(e);
      this.deps.logger.warn(`toolgate: ${target.tool} blocked: the daemon gave no answer: ${why}`);
      return block(`toolgate: blocked because toolgate could not check this call (it never lets a call run unchecked): ${why}`);
    }

    switch (decision.decision) {
      case "allow":
        return this.allow(decision, target, original, runId, callId);
      case "block":
        return block(blockText(decision, this.deps.settings.ackTool));
      case "escalate":
        return this.escalate(decision, target, original, call, runId, callId);
    }
  }

  private allow(decision: Decision, target: Target, original: Record<string, unknown>, runId?: string, callId?: string): BeforeToolCallResult {
    let run = original;
    if (decision.params) {
      if (target.bridged) {
        // The rewrite is of the inner call; putting it back into the bridge's
        // own argument shapes is guesswork, and guesswork is not a guarantee.
        return block(
          `toolgate: ${target.tool} may only run with params toolgate rewrote, which cannot pass through Tool Search's tool_call; call ${target.tool} directly`,
        );
      }
      run = rewritten(original, decision.params);
    }
    if (decision.context) this.deps.logger.info(`toolgate: context for ${target.tool}: ${decision.context}`);
    this.track(runId, callId, run);
    if (target.bridged && callId) {
      remember(this.bridges, bridgeKey(callId), { tool: target.tool, canonical: canonicalJson(target.params) });
    }
    return { params: run };
  }

  private escalate(
    decision: Decision,
    target: Target,
    original: Record<string, unknown>,
    call: ToolCall,
    runId?: string,
    callId?: string,
  ): BeforeToolCallResult {
    const a = decision.approval;
    // OpenClaw's own prompt stands in for toolgate's operator only where one
    // person's yes is enough and the call is not R4 (never relayable).
    if (this.deps.settings.nativeApproval && a && !decision.params && decision.risk !== "R4" && (a.min_approvals ?? 1) <= 1) {
      const expires = a.expires_at ? Date.parse(a.expires_at) - Date.now() : NaN;
      this.track(runId, callId, original);
      return {
        params: original,
        requireApproval: {
          title: `toolgate: approve this ${target.tool} call?`,
          description: `${decision.reason}\n(toolgate approval ${a.id}${decision.risk ? `, risk ${decision.risk}` : ""})`,
          severity: decision.risk === "R3" ? "critical" : "warning",
          ...(Number.isFinite(expires) && expires > 0 ? { timeoutMs: Math.min(expires, 10 * 60_000) } : {}),
          allowedDecisions: ["allow-once", "deny"],
          onResolution: (d) => this.relayNative(a.id, d, call),
        },
      };
    }
    return block(escalateText(decision, this.deps.settings.approveTool));
  }

  /** Records OpenClaw's approval in toolgate (a relayed vote). */
  private async relayNative(id: string, resolution: ApprovalResolution, call: ToolCall): Promise<void> {
    if (resolution !== "allow-once" && resolution !== "allow-always") {
      this.deps.logger.info(`toolgate: approval ${id} was not given in OpenClaw (${resolution})`);
      return;
    }
    const relay: ToolCall = {
      tool: APPROVE_TOOL,
      params: { id, reason: `approved in OpenClaw's approval prompt (${resolution})` },
      ...(call.session ? { session: call.session } : {}),
      ...(call.agent ? { agent: call.agent } : {}),
    };
    try {
      const d = await this.deps.daemon.check(relay);
      if (d.decision === "allow") this.deps.logger.info(`toolgate: approval ${id} relayed: ${d.reason}`);
      else this.deps.logger.error(`toolgate: toolgate refused the approval given in OpenClaw for ${id} (${d.reason}); the call ran on OpenClaw's approval alone`);
    } catch (e) {
      this.deps.logger.error(`toolgate: could not record OpenClaw's approval of ${id} in toolgate: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  /** The `after_tool_call` handler: what ran must be what was judged. */
  afterToolCall(event: AfterToolCallEvent & { result?: unknown }, ctx: ToolContext = {}): void {
    const callId = event.toolCallId ?? ctx.toolCallId;
    if (!callId) return;
    const key = trackKey(event.runId ?? ctx.runId, callId);
    const judged = this.judged.get(key);
    this.judged.delete(key);
    const didNotRun = isBlockedResult(event.result);
    if (!judged) {
      if (!this.seen.has(callId) && !didNotRun && !event.error) {
        this.finding(`${event.toolName} ran (call ${callId}) but toolgate's before_tool_call never saw it`);
      }
      return;
    }
    if (didNotRun) return;
    const ran = canonicalJson(isRecord(event.params) ? event.params : {});
    if (ran !== judged) {
      this.finding(
        `params that ran differ from the params toolgate judged: ${event.toolName} call ${callId}: ` +
          `judged ${clip(judged)}, ran ${clip(ran)}`,
      );
    } else {
      this.deps.logger.debug?.(`toolgate: ${event.toolName} call ${callId} ran with the params judged`);
    }
  }

  /**
   * Looks for `before_tool_call` handlers that run after toolgate's and says
   * so (once per distinct finding).
   */
  checkRunner(): void {
    const view = inspectRunner(this.deps.pluginId);
    let text = "";
    if (!view.visible) {
      text = "cannot see OpenClaw's hook registry: toolgate cannot tell whether another plugin's before_tool_call runs after it";
    } else if (view.late.length > 0) {
      const who = view.late.map((h) => `${h.pluginId} (priority ${String(h.priority)})`).join(", ");
      text = `before_tool_call handlers that run after toolgate's can change the params it judged: ${who}`;
    }
    if (text === memory.runnerFinding) return;
    memory.runnerFinding = text;
    if (!text) return;
    if (view.visible) this.finding(text);
    else this.deps.logger.warn(`toolgate: ${text}`);
  }

  private finding(text: string): void {
    this.deps.logger.error(`toolgate: TAMPER: ${text}`);
    this.deps.canary.tamper(text);
  }

  private track(runId: string | undefined, callId: string | undefined, params: Record<string, unknown>): void {
    if (!callId) return;
    remember(this.judged, trackKey(runId, callId), canonicalJson(params));
  }

  /** The workspace the call runs in: from the agent hooks of its run or session, else the config. */
  private cwdOf(ctx: ToolContext): string | undefined {
    const byRun = ctx.runId ? this.workspaces.get(`run:${ctx.runId}`) : undefined;
    const bySession = ctx.sessionKey ? this.workspaces.get(`session:${ctx.sessionKey}`) : undefined;
    return byRun ?? bySession ?? this.deps.workspaceOf(ctx.agentId ?? "main");
  }
}

function trackKey(runId: string | undefined, callId: string): string {
  return `${runId ?? "-"}\u0000${callId}`;
}

/** Map insert with a size bound (oldest out first). */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_TRACKED) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}

/**
 * The params to run when the daemon rewrote them. OpenClaw merges a
 * handler's params OVER the original ones (`{...original, ...returned}`),
 * so a key the rewrite dropped is returned as `undefined` to drop it there.
 */
function rewritten(original: Record<string, unknown>, params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(original)) if (!Object.hasOwn(params, k)) out[k] = undefined;
  return { ...out, ...structuredClone(params) };
}

function block(reason: string): BeforeToolCallResult {
  return { block: true, blockReason: reason };
}

/**
 * The block reason the model reads: the sentence, the protocol line, the
 * context; for knowledge to acknowledge (`TOOLGATE_ACK|<id>|…`), how to.
 */
export function blockText(d: Decision, ackTool: boolean): string {
  const lines = [`toolgate: ${d.reason}`];
  if (d.block_reason) lines.push(d.block_reason);
  if (d.context) lines.push(d.context);
  const id = ackIdOf(d.block_reason);
  if (id !== undefined) {
    lines.push(
      ackTool
        ? `To acknowledge this knowledge once you have read it: retry exactly the same call, or call ${ACK_TOOL} with {"id": "${id}"} and then retry exactly the same call.`
        : `To acknowledge this knowledge once you have read it: retry exactly the same call (${ACK_TOOL} is switched off here).`,
    );
  }
  return lines.join("\n");
}

/** The id of a `TOOLGATE_ACK|<id>|<reason>` line, or undefined. */
function ackIdOf(blockReason: string | undefined): string | undefined {
  if (!blockReason?.startsWith("TOOLGATE_ACK|")) return undefined;
  const id = blockReason.split("|")[1]?.trim();
  return id ? id : undefined;
}

/** The block reason of an escalation: what to do to get it approved. */
export function escalateText(d: Decision, approveTool: boolean): string {
  const lines = [`toolgate: ${d.reason}`];
  if (d.block_reason) lines.push(d.block_reason);
  const a = d.approval;
  if (a) {
    const where = a.approve_url ? `toolgate's control UI (${a.approve_url})` : "toolgate's control UI";
    let how =
      `Approval ${a.id}${a.expires_at ? ` (expires ${a.expires_at})` : ""}: an operator can approve it in ${where} ` +
      `or with \`toolgate approvals approve ${a.id}\`.`;
    if (approveTool) {
      how += ` If the user approves it in this conversation, call ${APPROVE_TOOL} with {"id": "${a.id}"} (honoured only where toolgate's policy allows relayed approvals).`;
    }
    lines.push(`${how} Then retry exactly the same call.`);
  } else {
    lines.push("No approval request could be opened for it: ask an operator.");
  }
  if (d.context) lines.push(d.context);
  return lines.join("\n");
}

function isBlockedResult(result: unknown): boolean {
  // OpenClaw's result for a vetoed call (`buildBlockedToolResult`).
  return isRecord(result) && isRecord(result.details) && result.details.status === "blocked";
}

function clip(s: string): string {
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}
