/**
 * The `toolgate_approve` tool (an agent-relayed approval, done safely): the
 * agent relays a user's "yes" to an escalation. The plugin decides nothing
 * here: the daemon honours a relay only when its policy sets
 * `[approvals] relay = true`, never for R4, once per approval, and only from
 * the session that made the call; its answer is the tool's result.
 */

import type { Daemon, ToolCall } from "./daemon.js";
import { APPROVE_TOOL } from "./guard.js";
import type { AgentTool, ToolFactoryContext, ToolResult } from "./openclaw.js";

/** The relay tool for one agent run (`ctx` says which session relays). */
export function approveTool(daemon: Daemon, ctx: ToolFactoryContext): AgentTool {
  return {
    name: APPROVE_TOOL,
    label: "toolgate approve",
    description:
      "Relay the user's approval of a call toolgate held for approval (a result with TOOLGATE_ESCALATE|<id>|…). " +
      "Use it only after the user said yes to that call in this conversation, never on your own initiative; " +
      "then retry exactly the same call.",
    parameters: {
      type: "object",
      properties: {
        id: { type: "string", description: "The approval id from the TOOLGATE_ESCALATE line." },
        reason: { type: "string", description: "What the user said, briefly." },
      },
      required: ["id"],
      additionalProperties: false,
    },
    async execute(_toolCallId, params): Promise<ToolResult> {
      const id = typeof params.id === "string" ? params.id.trim() : "";
      if (!id) return text(`toolgate: ${APPROVE_TOOL} needs {"id": "<approval id>"} from the TOOLGATE_ESCALATE line`);
      const reason = typeof params.reason === "string" && params.reason.trim() ? params.reason.trim() : undefined;
      const session = ctx.sessionKey || ctx.sessionId;
      const call: ToolCall = {
        tool: APPROVE_TOOL,
        params: { id, ...(reason ? { reason } : {}) },
        ...(session ? { session } : {}),
        ...(ctx.agentId ? { agent: ctx.agentId } : {}),
      };
      try {
        const d = await daemon.check(call);
        return text(`toolgate: ${d.reason}`, { decision: d.decision });
      } catch (e) {
        return text(`toolgate: the approval was not relayed: ${(e as Error)?.message ?? String(e)}`, { decision: "error" });
      }
    },
  };
}

function text(t: string, details?: unknown): ToolResult {
  return { content: [{ type: "text", text: t }], ...(details === undefined ? {} : { details }) };
}
