/**
 * From OpenClaw's hook event to toolgate's ToolCall: the wrapped call of
 * Tool Search's `tool_call` bridge, the context fields, and the canonical
 * JSON used to compare the params judged with the params that ran.
 */

import { isRecord, type ToolCall } from "./daemon.js";
import type { BeforeToolCallEvent, ToolContext } from "./openclaw.js";

/** The name of Tool Search's bridge tool. */
export const BRIDGE_TOOL = "tool_call";
/** Deepest `tool_call` nesting unwrapped (the daemon's core stops at 8 too). */
const MAX_BRIDGE_DEPTH = 8;
/**
 * Keys that select the target tool of a bridge call: OpenClaw's own three
 * first, in its order, then the spellings other runtimes send (the same
 * list as toolgate-core's `normalize::BRIDGE_NAME_KEYS`; the shared corpus
 * crates/toolgate-core/tests/corpus/tool_call_shapes.json keeps them equal).
 */
const SELECTOR_KEYS = ["id", "toolId", "name", "tool", "tool_id", "tool_name", "toolName"] as const;
/** Keys that carry the target's arguments: OpenClaw's two first. */
const ARG_KEYS = ["args", "input", "arguments", "params", "parameters", "tool_input", "toolInput", "tool_args"] as const;

/** The call to judge: the tool the model really asked for and its params. */
export interface Target {
  tool: string;
  params: Record<string, unknown>;
  /** True when the call came through the `tool_call` bridge. */
  bridged: boolean;
}

/**
 * Unwraps Tool Search's bridge: `tool_call {id: "exec", args: {command}}`
 * is judged as `exec {command}`. Mirrors how openclaw 2026.9.6 reads the
 * bridge's arguments (`prepareToolSearchDispatcherArguments` and
 * `readToolSearchCallArgs` in dist/local-model-lean-*.mjs):
 *   - the target is `id`, else `toolId`, else `name`;
 *   - a call with no selector but `args`/`input` holding one is lifted;
 *   - its input is `args` (or `input`) when that is a non-empty object, plus
 *     dotted `args.x` keys; otherwise every other top-level key;
 *   - a catalog id `source:sourceName:tool` names `tool`.
 * A bridge call without a target is judged as it is.
 */
export function targetOf(toolName: string, params: Record<string, unknown>): Target {
  let tool = toolName;
  let current = params;
  let bridged = false;
  for (let depth = 0; depth < MAX_BRIDGE_DEPTH && tool === BRIDGE_TOOL; depth++) {
    const inner = readBridge(current);
    if (!inner) break;
    tool = inner.tool;
    current = inner.params;
    bridged = true;
  }
  return { tool, params: current, bridged };
}

function readBridge(raw: Record<string, unknown>): { tool: string; params: Record<string, unknown> } | undefined {
  let args = raw;
  // A selector nested in args/input is lifted to the top (OpenClaw does so
  // before validating the call).
  if (!SELECTOR_KEYS.some((k) => Object.hasOwn(args, k))) {
    const nested = argsOf(args);
    if (isRecord(nested) && selectorOf(nested) !== undefined) {
      const rest = withoutKeys(args, ARG_KEYS);
      args = { ...rest, ...withoutKeys(nested, SELECTOR_KEYS), id: selectorOf(nested) };
    }
  }
  const selectorKey = SELECTOR_KEYS.find((k) => typeof args[k] === "string" && (args[k] as string).trim() !== "");
  if (!selectorKey) return undefined;
  const selector = (args[selectorKey] as string).trim();

  const dotted: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (k.startsWith("args.") && k.length > 5) dotted[k.slice(5)] = v;
  }
  let nested = argsOf(args);
  if (typeof nested === "string") {
    // Some models send the arguments as a JSON string.
    try {
      nested = JSON.parse(nested) as unknown;
    } catch {
      // left as is: not an object, so the flattened form applies
    }
  }
  let input: Record<string, unknown>;
  if (isRecord(nested) && Object.keys(nested).length > 0) {
    input = { ...dotted, ...nested };
  } else {
    const flat: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(args)) {
      if ((ARG_KEYS as readonly string[]).includes(k) || k === selectorKey || k.startsWith("args.")) continue;
      if ((SELECTOR_KEYS as readonly string[]).includes(k)) continue;
      flat[k] = v;
    }
    input = { ...dotted, ...flat };
  }
  return { tool: toolOfCatalogId(selector), params: input };
}

/** The first argument key's value that is present (not null). */
function argsOf(v: Record<string, unknown>): unknown {
  for (const k of ARG_KEYS) {
    if (v[k] !== undefined && v[k] !== null) return v[k];
  }
  return undefined;
}

function withoutKeys(v: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(v).filter(([k]) => !keys.includes(k)));
}

function selectorOf(v: Record<string, unknown>): string | undefined {
  for (const k of SELECTOR_KEYS) {
    const s = v[k];
    if (typeof s === "string" && s.trim() !== "") return s.trim();
  }
  return undefined;
}

/** `openclaw:core:exec` → `exec`; a plain name stays as it is. */
function toolOfCatalogId(id: string): string {
  const m = /^[a-z]+:[^:]*:(.+)$/.exec(id);
  return m?.[1] ?? id;
}

/**
 * The key under which a bridge call's parent is remembered: OpenClaw names
 * the call the bridge makes `tool_search_code:<parent id, sanitized>:<tool>:<n>`
 * (`ToolSearchRuntime.executeEntry`), so the parent's id is sanitized the
 * same way (`sanitizeToolCallIdPart`).
 */
export function bridgeKey(parentToolCallId: string): string {
  return parentToolCallId.trim().replace(/[^A-Za-z0-9_.:-]+/g, "_").slice(0, 120) || "call";
}

/** The {@link bridgeKey} of the call that made this bridged call, or undefined. */
export function bridgeParentOf(toolCallId: string | undefined, toolName: string): string | undefined {
  if (!toolCallId?.startsWith("tool_search_code:")) return undefined;
  const rest = toolCallId.slice("tool_search_code:".length);
  const m = new RegExp(`:${escapeRegExp(toolName)}:\\d+$`).exec(rest);
  return m ? rest.slice(0, m.index) : undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Everything the ToolCall carries besides tool and params. */
export interface CallContext {
  cwd?: string;
}

/** The ToolCall for `target`, with what OpenClaw says about who and where. */
export function toolCall(target: Target, event: BeforeToolCallEvent, ctx: ToolContext, extra: CallContext): ToolCall {
  const call: ToolCall = { tool: target.tool, params: target.params };
  const callId = event.toolCallId ?? ctx.toolCallId;
  if (callId) call.call_id = callId;
  if (ctx.agentId) call.agent = ctx.agentId;
  const session = ctx.sessionKey || ctx.sessionId;
  if (session) call.session = session;
  const channel = ctx.requester?.channel || ctx.channelId;
  if (channel) call.channel = channel;
  if (extra.cwd) call.cwd = extra.cwd;
  const r = ctx.requester;
  if (r && (r.senderId || r.senderIsOwner !== undefined || r.roleIds?.length)) {
    const requester: NonNullable<ToolCall["requester"]> = {};
    if (r.senderId) requester.id = r.senderId;
    // An unproven owner bit is not an owner: only `true` counts.
    const role = r.senderIsOwner === true ? "owner" : r.roleIds?.[0];
    if (role) requester.role = role;
    call.requester = requester;
  }
  return call;
}

/**
 * Canonical JSON (RFC 8785's shape: object keys sorted by UTF-16 code
 * units, no whitespace). `undefined` members are dropped as JSON drops
 * them, so two param objects compare equal exactly when they serialize to
 * the same JSON whatever their key order.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return "null";
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => (v === undefined || typeof v === "function" ? "null" : canonicalJson(v))).join(",")}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined && typeof obj[k] !== "function")
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

/** A deep copy of JSON params (what the tool will get is plain JSON). */
export function cloneParams(params: Record<string, unknown>): Record<string, unknown> {
  return structuredClone(params);
}
