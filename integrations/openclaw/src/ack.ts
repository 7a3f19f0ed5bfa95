/**
 * The `toolgate_ack` tool: the agent acknowledges knowledge (an SOP or
 * memories) toolgate showed it with a `TOOLGATE_ACK|<id>|…` result. The
 * plugin decides nothing here: the daemon takes a check of this tool as the
 * acknowledgement, honours it only from the scope the knowledge was shown
 * to (the call's session, else its agent) and within its time, and its
 * answer is the tool's result. Retrying exactly the same call acknowledges
 * too; this tool is the explicit way.
 */

import type { Daemon, ToolCall } from "./daemon.js";
import { ACK_TOOL } from "./guard.js";
import type { AgentTool, ToolFactoryContext, ToolResult } from "./openclaw.js";

/** The acknowledgement tool for one agent run (`ctx` says which session acknowledges). */
export function ackTool(daemon: Daemon, ctx: ToolFactoryContext): AgentTool {
  return {
    name: ACK_TOOL,
    label: "toolgate acknowledge",
    description:
      "Acknowledge knowledge (SOPs, memories) toolgate showed you with a call it held (a result with TOOLGATE_ACK|<id>|…). " +
      "Use it only after you have read that knowledge and will follow it; then retry exactly the same call. " +
      "Retrying the same call also acknowledges it, without this tool.",
    parameters: {
      type: "object",
      properties: {
        id: { type: "string", description: "The id from the TOOLGATE_ACK line." },
      },
      required: ["id"],
      additionalProperties: false,
    },
    async execute(_toolCallId, params): Promise<ToolResult> {
      const id = typeof params.id === "string" ? params.id.trim() : "";
      if (!id) return text(`toolgate: ${ACK_TOOL} needs {"id": "<id>"} from the TOOLGATE_ACK line`);
      // The same scope as the held call (toolCall() in calls.ts): the daemon
      // accepts an acknowledgement only from the session, else the agent,
      // the knowledge was shown to.
      const session = ctx.sessionKey || ctx.sessionId;
      const call: ToolCall = {
        tool: ACK_TOOL,
        params: { id },
        ...(session ? { session } : {}),
        ...(ctx.agentId ? { agent: ctx.agentId } : {}),
      };
      try {
        const d = await daemon.check(call);
        return text(`toolgate: ${d.reason}`, { decision: d.decision });
      } catch (e) {
        return text(
          `toolgate: the knowledge was not acknowledged: ${(e as Error)?.message ?? String(e)}\n` +
            "Retrying exactly the same call also acknowledges it.",
          { decision: "error" },
        );
      }
    },
  };
}

function text(t: string, details?: unknown): ToolResult {
  return { content: [{ type: "text", text: t }], ...(details === undefined ? {} : { details }) };
}
