/**
 * The plugin's settings: `plugins.entries.toolgate.config` in OpenClaw's
 * config (`api.pluginConfig`), with environment fallbacks so the same
 * variables as `toolgate hook` work.
 */

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The resolved settings. */
export interface Settings {
  /** Base URL of `toolgate serve`, without a trailing slash. */
  url: string;
  /** Where the agent token comes from: an explicit token or a file to read. */
  token: { value: string; source: string } | { file: string; source: string };
  /** Budget of one check (without `wait`). */
  timeoutMs: number;
  /** Seconds the daemon may hold an escalation open, if any. */
  waitSeconds?: number;
  /** Register the `toolgate_approve` relay tool. */
  approveTool: boolean;
  /** Register the `toolgate_ack` knowledge-acknowledgement tool. */
  ackTool: boolean;
  /** Put the daemon's protocol text into the system prompt. */
  protocol: boolean;
  /** Ask for escalations with OpenClaw's own approval prompt. */
  nativeApproval: boolean;
}

/** The daemon's default address (`toolgate serve --listen`). */
export const DEFAULT_URL = "http://127.0.0.1:7878";
/** Default budget of one check: under OpenClaw's 15 s handler timeout. */
export const DEFAULT_TIMEOUT_MS = 8000;

/**
 * Reads `pluginConfig` (OpenClaw validated it against the manifest's schema,
 * but a hand-loaded plugin may get anything) and the environment.
 * Throws on a setting that cannot work, with the fix in the message.
 */
export function resolveSettings(
  pluginConfig: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  const cfg = pluginConfig ?? {};
  const str = (key: string): string | undefined => {
    const v = cfg[key];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string") throw new Error(`plugins.entries.toolgate.config.${key} must be a string`);
    return v;
  };
  const int = (key: string, min: number, max: number): number | undefined => {
    const v = cfg[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
      throw new Error(`plugins.entries.toolgate.config.${key} must be an integer in ${min}..${max}`);
    }
    return v;
  };
  const bool = (key: string, dflt: boolean): boolean => {
    const v = cfg[key];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== "boolean") throw new Error(`plugins.entries.toolgate.config.${key} must be true or false`);
    return v;
  };

  const url = (str("url") ?? nonEmpty(env.TOOLGATE_URL) ?? DEFAULT_URL).replace(/\/+$/, "");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`toolgate url ${JSON.stringify(url)} is not a URL (e.g. ${DEFAULT_URL})`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`toolgate url ${JSON.stringify(url)} must be http:// or https://`);
  }

  const explicit = str("token");
  const fromEnv = nonEmpty(env.TOOLGATE_AGENT_TOKEN);
  const file = str("tokenFile");
  const token: Settings["token"] = explicit
    ? { value: explicit, source: "plugins.entries.toolgate.config.token" }
    : fromEnv
      ? { value: fromEnv, source: "$TOOLGATE_AGENT_TOKEN" }
      : file
        ? { file, source: "plugins.entries.toolgate.config.tokenFile" }
        : { file: join(defaultDataDir(env), "agent.token"), source: "toolgate's data dir" };

  const settings: Settings = {
    url,
    token,
    timeoutMs: int("timeoutMs", 100, 14000) ?? DEFAULT_TIMEOUT_MS,
    approveTool: bool("approveTool", true),
    ackTool: bool("ackTool", true),
    protocol: bool("protocol", true),
    nativeApproval: bool("nativeApproval", false),
  };
  const wait = int("wait", 1, 600);
  if (wait !== undefined) settings.waitSeconds = wait;
  return settings;
}

/** toolgate's data dir, as `toolgate serve` picks it. */
function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const explicit = nonEmpty(env.TOOLGATE_DATA_DIR);
  if (explicit) return explicit;
  const state = nonEmpty(env.XDG_STATE_HOME);
  return join(state ?? join(nonEmpty(env.HOME) ?? homedir(), ".local", "state"), "toolgate");
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/**
 * The agent token, read from its file when it came as one (every time it is
 * asked for, so a rotated token file is picked up). Throws with the fix.
 */
export function readToken(settings: Settings): string {
  const t = settings.token;
  if ("value" in t) return t.value;
  let text: string;
  try {
    text = readFileSync(t.file, "utf8");
  } catch (e) {
    throw new Error(
      `no agent token: cannot read ${t.file} (${(e as NodeJS.ErrnoException).code ?? String(e)}); ` +
        "set plugins.entries.toolgate.config.token or tokenFile, or TOOLGATE_AGENT_TOKEN",
    );
  }
  const token = text.trim();
  if (token === "") throw new Error(`no agent token: ${t.file} is empty`);
  return token;
}
