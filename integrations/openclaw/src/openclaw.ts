/**
 * The slice of OpenClaw's plugin API this plugin uses, typed locally so the
 * plugin has no dependency on the `openclaw` package. Shapes follow
 * openclaw 2026.9.6 (`dist/plugin-sdk`, `PluginHook*` types); every field
 * OpenClaw documents as optional is optional here too, and the code treats
 * a missing field as unknown, never as a safe default.
 */

/** OpenClaw's scoped plugin logger. */
export interface Logger {
  debug?: (message: string) => void;
  info: (message: string) => void;
  warn: (message: string) => void;
  error: (message: string) => void;
}

/** `ctx.requester` of a tool hook: who started the message run. */
export interface Requester {
  channel?: string;
  accountId?: string;
  senderId?: string;
  senderIsOwner?: boolean;
  roleIds?: readonly string[];
}

/** The event of `before_tool_call`. */
export interface BeforeToolCallEvent {
  toolName: string;
  params: Record<string, unknown>;
  toolCallId?: string;
  runId?: string;
}

/** The context of `before_tool_call` / `after_tool_call`. */
export interface ToolContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  runId?: string;
  toolName?: string;
  toolCallId?: string;
  channelId?: string;
  requester?: Requester;
  abortSignal?: AbortSignal;
}

/** How OpenClaw reports an approval request's outcome. */
export type ApprovalResolution = "allow-once" | "allow-always" | "deny" | "timeout" | "cancelled";

/** What a `before_tool_call` handler may return. */
export interface BeforeToolCallResult {
  params?: Record<string, unknown>;
  block?: boolean;
  blockReason?: string;
  requireApproval?: {
    title: string;
    description: string;
    severity?: "info" | "warning" | "critical";
    timeoutMs?: number;
    timeoutReason?: string;
    allowedDecisions?: Array<"allow-once" | "allow-always" | "deny">;
    onResolution?: (decision: ApprovalResolution) => Promise<void> | void;
  };
}

/** The event of `after_tool_call`: `params` are the params that ran. */
export interface AfterToolCallEvent {
  toolName: string;
  params: Record<string, unknown>;
  runId?: string;
  toolCallId?: string;
  error?: string;
}

/** The context of agent hooks (`before_prompt_build`, `model_call_started`). */
export interface AgentContext {
  runId?: string;
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  workspaceDir?: string;
}

/** What `before_prompt_build` may return (the part used here). */
export interface PromptBuildResult {
  appendSystemContext?: string;
}

/** Options of `api.on`. */
export interface HookOptions {
  priority?: number;
  timeoutMs?: number;
}

/** One tool's result, as an agent tool returns it. */
export interface ToolResult {
  content: Array<{ type: "text"; text: string }>;
  details?: unknown;
}

/** An agent tool (the part used here). */
export interface AgentTool {
  name: string;
  label: string;
  description: string;
  parameters: Record<string, unknown>;
  execute: (toolCallId: string, params: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolResult>;
}

/** What OpenClaw hands a tool factory. */
export interface ToolFactoryContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  workspaceDir?: string;
}

/** The plugin API handed to `register(api)`. */
export interface PluginApi {
  id: string;
  registrationMode?: string;
  config?: unknown;
  pluginConfig?: Record<string, unknown>;
  logger: Logger;
  runtime?: {
    config?: { current?: () => unknown };
    agent?: { resolveAgentWorkspaceDir?: (cfg: unknown, agentId: string) => string };
  };
  on(hook: string, handler: (event: any, ctx: any) => unknown, options?: HookOptions): void;
  registerTool(tool: AgentTool | ((ctx: ToolFactoryContext) => AgentTool | null | undefined), options?: { name?: string; names?: string[] }): void;
}
