/**
 * State kept once per process. OpenClaw may load this plugin more than
 * once in a process (a registry per load purpose, reloads, possibly fresh
 * module instances), so per-process state hangs off `globalThis` under a
 * `Symbol.for` key rather than module scope.
 */

const KEY = Symbol.for("toolgate.openclaw.state");

/** The process-wide value named `name`, made by `make` the first time. */
export function processWide<T>(name: string, make: () => T): T {
  const g = globalThis as unknown as Record<symbol, Record<string, unknown> | undefined>;
  const all = (g[KEY] ??= {});
  if (!(name in all)) all[name] = make();
  return all[name] as T;
}
