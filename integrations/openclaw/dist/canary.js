/**
 * The liveness canary (a hook that silently never fires is a guard that
 * is not there): tell the daemon when the plugin starts, when the agent first
 * does something, when `before_tool_call` first fires, and when params were
 * tampered with. An agent that is active while the hook stays silent is
 * running unguarded; the daemon flags it in `/v1/state`, and this plugin
 * logs it itself after 30 s, so the warning is seen even when nobody looks
 * at the daemon.
 *
 * Reports are best-effort: short timeout, never awaited by a tool call,
 * failures logged (once per kind, then quietly) and dropped.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { processWide } from "./shared.js";
/** How long after the first activity the hook must have fired. */
export const SILENT_AFTER_MS = 30_000;
/** Budget of one canary report. */
const REPORT_TIMEOUT_MS = 5000;
/** Longest `detail` the daemon keeps. */
const MAX_DETAIL = 1000;
/**
 * Once per process, whichever registration reports: OpenClaw may register
 * the plugin several times (one registry per load purpose), and the agent
 * hooks of one registration and the tool hooks of another must count as one
 * instance, or the silence warning would fire for a registration that
 * simply is not the one dispatching tool calls.
 */
const state = processWide("canary", () => ({
    /** This plugin process, stable for its lifetime. */
    instance: `${hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`,
    started: false,
    activitySeen: false,
    hookSeen: false,
    timer: undefined,
    failedKinds: new Set(),
    tampers: new Set(),
}));
/** This plugin process's instance id, as reported to the daemon. */
export const INSTANCE = state.instance;
/** The canary, as one registration sees it (its daemon and logger). */
export class Canary {
    daemon;
    logger;
    silentAfterMs;
    constructor(daemon, logger, silentAfterMs = SILENT_AFTER_MS) {
        this.daemon = daemon;
        this.logger = logger;
        this.silentAfterMs = silentAfterMs;
    }
    /** The plugin registered (reported once per process). */
    start() {
        if (state.started)
            return;
        state.started = true;
        this.post("start");
    }
    /** The agent did something; from now on the hook should fire before any tool runs. */
    activity() {
        if (state.activitySeen)
            return;
        state.activitySeen = true;
        this.post("activity");
        if (state.hookSeen)
            return;
        state.timer = setTimeout(() => {
            if (state.hookSeen)
                return;
            this.logger.warn(`toolgate: before_tool_call has not fired ${Math.round(this.silentAfterMs / 1000)} s after the agent's first activity: ` +
                "tool calls may be running unguarded (is the toolgate plugin enabled, and is its hook registered? " +
                "see `openclaw plugins inspect toolgate --runtime --json`)");
        }, this.silentAfterMs);
        // Never keep a one-shot CLI process alive for the canary's sake.
        state.timer.unref();
    }
    /** `before_tool_call` fired. */
    hook() {
        if (state.hookSeen)
            return;
        state.hookSeen = true;
        if (state.timer)
            clearTimeout(state.timer);
        this.post("hook");
    }
    /** Params that ran differ from the judged ones, or something can rewrite them after toolgate. */
    tamper(detail) {
        // The same finding once per process: a loop of calls must not flood the daemon.
        if (state.tampers.has(detail))
            return;
        state.tampers.add(detail);
        this.post("tamper", detail);
    }
    post(event, detail) {
        const report = {
            runtime: "openclaw",
            instance: INSTANCE,
            event,
            ...(detail === undefined ? {} : { detail: truncate(detail, MAX_DETAIL) }),
        };
        this.daemon.canary(report, REPORT_TIMEOUT_MS).then(() => state.failedKinds.delete(event), (e) => {
            const message = `toolgate: could not report "${event}" to ${this.daemon.url}/v1/canary: ${e?.message ?? String(e)}`;
            if (state.failedKinds.has(event))
                this.logger.debug?.(message);
            else
                this.logger.warn(message);
            state.failedKinds.add(event);
        });
    }
}
function truncate(s, max) {
    return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
