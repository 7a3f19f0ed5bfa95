/**
 * toolgate's OpenClaw plugin. It is thin: every decision comes from the
 * toolgate daemon (`toolgate serve`, docs/http-api.md); the plugin maps
 * OpenClaw's hook events to ToolCalls and the daemon's answers back.
 *
 * - `before_tool_call` (lowest priority: runs last) → `POST /v1/check`:
 *   allow runs the exact params judged, block and escalate block with the
 *   reason (or OpenClaw's approval prompt, with `nativeApproval`); no answer
 *   blocks.
 * - `after_tool_call`: the params that ran must be the params judged.
 * - `before_prompt_build` → toolgate's rules text in the system prompt.
 * - `toolgate_approve`: relays a user's approval to the daemon.
 * - `toolgate_ack`: acknowledges knowledge the daemon showed (TOOLGATE_ACK).
 * - a canary tells the daemon (and the log) when the hook stays silent.
 *
 * Load it with `plugins.load.paths: ["<this dir>"]` and
 * `plugins.entries.toolgate: {enabled: true, hooks: {allowConversationAccess: true}, config: {…}}`.
 */
import { ackTool } from "./ack.js";
import { approveTool } from "./approve.js";
import { Canary } from "./canary.js";
import { resolveSettings } from "./config.js";
import { Daemon } from "./daemon.js";
import { ACK_TOOL, APPROVE_TOOL, Guard } from "./guard.js";
import { TOOLGATE_PRIORITY } from "./runner.js";
/** The plugin id (also `openclaw.plugin.json`'s). */
export const PLUGIN_ID = "toolgate";
/** How long a failed protocol fetch is not retried. */
const PROTOCOL_RETRY_MS = 30_000;
/** How long the protocol text is used before it is fetched again. */
const PROTOCOL_REFRESH_MS = 5 * 60_000;
/** The plugin's entry, as OpenClaw loads it (`package.json` → `openclaw.extensions`). */
const plugin = {
    id: PLUGIN_ID,
    name: "toolgate",
    description: "Asks the toolgate daemon before every tool call runs: allow, block, or hold for a person's approval.",
    register(api) {
        const logger = api.logger;
        let settings;
        try {
            settings = resolveSettings(api.pluginConfig);
        }
        catch (e) {
            // A plugin that cannot work must not leave the agent unguarded.
            const why = e?.message ?? String(e);
            logger.error(`toolgate: misconfigured, every tool call will be blocked: ${why}`);
            api.on("before_tool_call", () => ({ block: true, blockReason: `toolgate: blocked: the toolgate plugin is misconfigured: ${why}` }), { priority: TOOLGATE_PRIORITY });
            return;
        }
        const daemon = new Daemon(settings);
        const canary = new Canary(daemon, logger);
        const guard = new Guard({
            pluginId: api.id || PLUGIN_ID,
            settings,
            daemon,
            canary,
            logger,
            workspaceOf: (agentId) => {
                try {
                    const cfg = api.runtime?.config?.current?.() ?? api.config;
                    return api.runtime?.agent?.resolveAgentWorkspaceDir?.(cfg, agentId) || undefined;
                }
                catch {
                    return undefined;
                }
            },
        });
        // With `wait`, a check may take the whole wait: the handler's own
        // timeout (15 s by default, then the call is blocked) must cover it.
        const waitBudget = settings.waitSeconds ? settings.timeoutMs + settings.waitSeconds * 1000 + 2000 : undefined;
        api.on("before_tool_call", (event, ctx) => guard.beforeToolCall(event, ctx), {
            priority: TOOLGATE_PRIORITY,
            ...(waitBudget ? { timeoutMs: waitBudget } : {}),
        });
        api.on("after_tool_call", (event, ctx) => guard.afterToolCall(event, ctx));
        // Activity for the canary even when the prompt hook is off or not allowed.
        api.on("model_call_started", (_event, ctx) => guard.noteAgent(ctx));
        api.on("gateway_start", () => guard.checkRunner());
        if (settings.protocol) {
            let text;
            let fetchedAt = -Infinity;
            let failedAt = -Infinity;
            api.on("before_prompt_build", async (_event, ctx) => {
                guard.noteAgent(ctx);
                const now = Date.now();
                // Fetched once, then again now and then: the text follows the
                // daemon's policy, which can be reloaded.
                if (now - fetchedAt >= PROTOCOL_REFRESH_MS && now - failedAt >= PROTOCOL_RETRY_MS) {
                    try {
                        text = await daemon.protocol(Math.min(settings.timeoutMs, 3000));
                        fetchedAt = now;
                    }
                    catch (e) {
                        // The prompt goes on without it (or with the last text); calls are still checked.
                        failedAt = now;
                        logger.warn(`toolgate: no rules text for the prompt: ${e?.message ?? String(e)}`);
                    }
                }
                return text === undefined ? undefined : { appendSystemContext: text };
            });
        }
        if (settings.approveTool) {
            api.registerTool((ctx) => approveTool(daemon, ctx), { name: APPROVE_TOOL });
        }
        if (settings.ackTool) {
            api.registerTool((ctx) => ackTool(daemon, ctx), { name: ACK_TOOL });
        }
        // Discovery and metadata loads register nothing live: no canary for them.
        if (api.registrationMode === undefined || api.registrationMode === "full") {
            canary.start();
            if (settings.nativeApproval) {
                logger.warn("toolgate: nativeApproval is on: an escalated call runs once OpenClaw's approval prompt says yes; " +
                    "the approval is relayed to toolgate, but toolgate does not get to refuse it");
            }
            logger.info(`toolgate: checking every tool call with ${settings.url} (agent token from ${settings.token.source})`);
        }
    },
};
export default plugin;
