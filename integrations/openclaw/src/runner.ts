/**
 * What toolgate's guarantee rests on: how OpenClaw runs `before_tool_call`
 * handlers, and a look at its registry for handlers that would run after
 * toolgate's.
 *
 * How the runner works (read in openclaw 2026.9.6; re-read when the version
 * changes, the file names carry build hashes):
 *
 * - `createHookRunner` / `runModifyingHook` / `runBeforeToolCall` in
 *   dist/hooks-*.mjs: the handlers of a hook are `registry.typedHooks`
 *   filtered by name (and `matcher`), sorted by `priority`, higher first
 *   (`getHooksForName`: `toSorted((a, b) => (b.priority ?? 0) - (a.priority ?? 0))`,
 *   a stable sort, so equal priorities keep registration order). They run one
 *   after another, each with its own copy of the ORIGINAL event
 *   (`isolateEventPerHandler`): a handler never sees an earlier handler's
 *   rewritten params.
 * - Results merge (`mergeResults` of `runBeforeToolCall`): `block: true` is
 *   sticky and stops the chain; the LAST `params` returned wins, except that
 *   once a handler has asked for approval (`requireApproval`) the params are
 *   frozen at that point and later `params` are ignored.
 * - `runBeforeToolCallHook` in dist/agent-tools.before-tool-call-*.mjs then
 *   runs the tool with `{...paramsTheHooksSaw, ...mergedResult.params}`
 *   (`mergeParamsWithApprovalOverrides`), after `finalizeBeforeToolCallParams`.
 *   The runner is created with `before_tool_call: "fail-closed"`
 *   (dist/hook-runner-global-*.mjs): a handler that throws or times out
 *   (15 s by default, `timeoutMs` of `api.on` overrides) blocks the call.
 * - "Trusted tool policies" (`registerTrustedToolPolicy`) run BEFORE all
 *   `before_tool_call` handlers; toolgate sees their result, so they cannot
 *   change params after toolgate.
 * - `after_tool_call` gets the params the tool ran with (the runner records
 *   them just before `execute`, `recordAdjustedParamsForToolCall`).
 *
 * So toolgate registers with the lowest priority it can (it runs last),
 * returns on allow the exact params it judged (so they are the last
 * `params`, and the merge is a no-op over the same keys), and checks in
 * `after_tool_call` that what ran is what it judged. What it cannot stop
 * statically is another handler that runs after it (same priority but
 * registered later, or a lower or non-numeric priority) or one that asked
 * for approval with its own params before toolgate ran: the first is looked
 * for here and reported, the second shows up in `after_tool_call`.
 */

/** toolgate's priority: the lowest safe integer, so it runs after everything else. */
export const TOOLGATE_PRIORITY = Number.MIN_SAFE_INTEGER;

/** A `before_tool_call` handler of another plugin that runs after toolgate's. */
export interface LateHandler {
  pluginId: string;
  priority: unknown;
  source?: string;
}

/** What the registries show. */
export interface RunnerView {
  /** False when no registry could be found (OpenClaw changed its internals). */
  visible: boolean;
  /** False when the registries do not list toolgate's own handler. */
  ownFound: boolean;
  /** Handlers that run after toolgate's. */
  late: LateHandler[];
}

interface TypedHook {
  pluginId?: unknown;
  hookName?: unknown;
  priority?: unknown;
  source?: unknown;
}

interface RegistryLike {
  typedHooks?: unknown;
}

/**
 * The registries OpenClaw dispatches hooks from, found through the
 * process-global singletons it keeps on `globalThis` under `Symbol.for`
 * keys: the global hook runner's registry
 * (`openclaw.plugins.hook-runner-global-state`, dist/hook-runner-global-*.mjs)
 * and the active plugin registry (`openclaw.pluginRegistryState`,
 * dist/runtime-*.mjs). These are internals, not API: when they move, the
 * view says so (`visible: false`) instead of pretending all is well.
 */
function registries(): RegistryLike[] {
  const g = globalThis as Record<symbol, unknown>;
  const out: RegistryLike[] = [];
  const runner = g[Symbol.for("openclaw.plugins.hook-runner-global-state")] as { registry?: RegistryLike } | undefined;
  if (runner?.registry) out.push(runner.registry);
  const active = g[Symbol.for("openclaw.pluginRegistryState")] as { activeRegistry?: RegistryLike } | undefined;
  if (active?.activeRegistry && active.activeRegistry !== runner?.registry) out.push(active.activeRegistry);
  return out;
}

/** Looks for `before_tool_call` handlers of other plugins that run after `pluginId`'s. */
export function inspectRunner(pluginId: string): RunnerView {
  const regs = registries().filter((r) => Array.isArray(r.typedHooks));
  if (regs.length === 0) return { visible: false, ownFound: false, late: [] };
  let ownFound = false;
  const late = new Map<string, LateHandler>();
  for (const reg of regs) {
    const hooks = (reg.typedHooks as TypedHook[]).filter((h) => h && h.hookName === "before_tool_call");
    // The runner's own order: priority descending, stable.
    const ordered = hooks
      .map((h, i) => ({ h, i }))
      .sort((a, b) => numeric(b.h.priority) - numeric(a.h.priority) || a.i - b.i);
    const lastOwn = ordered.findLastIndex(({ h }) => h.pluginId === pluginId);
    if (lastOwn < 0) continue;
    ownFound = true;
    for (const { h } of ordered.slice(lastOwn + 1)) {
      if (h.pluginId === pluginId) continue;
      add(late, h);
    }
    // A priority that is not a number sorts unpredictably (NaN comparisons):
    // such a handler may run after toolgate's wherever it sits.
    for (const h of hooks) {
      const p = h.priority;
      if (h.pluginId !== pluginId && p !== undefined && (typeof p !== "number" || Number.isNaN(p))) add(late, h);
    }
  }
  return { visible: true, ownFound, late: [...late.values()] };
}

function numeric(p: unknown): number {
  return typeof p === "number" && !Number.isNaN(p) ? p : p === undefined ? 0 : Number.NaN;
}

function add(into: Map<string, LateHandler>, h: TypedHook): void {
  const pluginId = typeof h.pluginId === "string" ? h.pluginId : "(unknown plugin)";
  const key = `${pluginId}\0${String(h.priority)}`;
  const entry: LateHandler = { pluginId, priority: h.priority };
  if (typeof h.source === "string") entry.source = h.source;
  into.set(key, entry);
}
