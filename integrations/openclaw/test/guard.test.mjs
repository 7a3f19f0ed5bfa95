// The gate against a scripted daemon: every answer, every failure.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Daemon } from "../dist/daemon.js";
import { blockText, Guard } from "../dist/guard.js";
import { decision, fakeDaemon, memoryLogger, settingsFor } from "./helpers.mjs";

/** A guard on a fake daemon; the canary only records. */
async function setup(answer, extra = {}) {
  const daemon = await fakeDaemon(answer);
  const settings = settingsFor(daemon.url, extra);
  const logger = memoryLogger();
  const canary = { events: [], activity() { this.events.push("activity"); }, hook() { this.events.push("hook"); }, tamper(d) { this.events.push(`tamper: ${d}`); } };
  const guard = new Guard({ pluginId: "toolgate", settings, daemon: new Daemon(settings), canary, logger, workspaceOf: () => "/config/ws" });
  return { daemon, guard, logger, canary, settings };
}

const exec = (command, toolCallId = `call_${Math.random().toString(16).slice(2)}`) => ({ toolName: "exec", params: { command }, toolCallId, runId: "run-1" });
const ctx = { agentId: "main", sessionKey: "agent:main:main", runId: "run-1" };

test("allow returns the exact params judged; the daemon sees the call and its context", async (t) => {
  const { daemon, guard, canary } = await setup(() => ({ body: decision("allow") }));
  t.after(daemon.close);
  const event = exec("ls -la");
  const out = await guard.beforeToolCall(event, ctx);
  assert.deepEqual(out, { params: { command: "ls -la" } });
  assert.notEqual(out.params, event.params, "a copy, not the event's own object");
  const [req] = daemon.checks();
  assert.equal(req.path, "/v1/check");
  assert.equal(req.headers.authorization, "Bearer agent-token-for-tests");
  assert.deepEqual(req.body, { tool: "exec", params: { command: "ls -la" }, call_id: event.toolCallId, agent: "main", session: "agent:main:main", cwd: "/config/ws" });
  assert.deepEqual(canary.events, ["hook"]);
});

test("block answers with toolgate's reason and the protocol line", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("block") }));
  t.after(daemon.close);
  const out = await guard.beforeToolCall(exec("rm -rf /"), ctx);
  assert.equal(out.block, true);
  assert.equal(out.blockReason, "toolgate: blocked: no\nTOOLGATE_BLOCK|blocked: no");
});

test("escalate blocks with the approval id and how to get it approved", async (t) => {
  const id = "0123456789abcdef0123456789abcdef";
  const { daemon, guard } = await setup(() => ({
    body: decision("escalate", {
      block_reason: `TOOLGATE_ESCALATE|${id}|needs approval: maybe`,
      approval: { id, expires_at: "2030-01-01T00:00:00Z", min_approvals: 1, approve_url: `http://x/#approval/${id}` },
    }),
  }));
  t.after(daemon.close);
  const out = await guard.beforeToolCall(exec("rm -rf ../x"), ctx);
  assert.equal(out.block, true);
  const lines = out.blockReason.split("\n");
  assert.equal(lines[0], "toolgate: needs approval: maybe");
  assert.equal(lines[1], `TOOLGATE_ESCALATE|${id}|needs approval: maybe`);
  assert.match(lines[2], new RegExp(`toolgate approvals approve ${id}`));
  assert.match(lines[2], /toolgate_approve/);
  assert.match(lines[2], /retry exactly the same call/);
});

test("with wait, the check asks the daemon to hold the escalation", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("allow") }), { waitSeconds: 30 });
  t.after(daemon.close);
  await guard.beforeToolCall(exec("ls"), ctx);
  assert.equal(daemon.checks()[0].path, "/v1/check?wait=30s");
});

test("nativeApproval hands a one-person, non-R4 escalation to OpenClaw's prompt and relays the yes", async (t) => {
  const id = "fedcba9876543210fedcba9876543210";
  const { daemon, guard } = await setup((r) =>
    r.body.tool === "toolgate_approve"
      ? { body: decision("allow", { reason: "allowed: approval recorded as relayed" }) }
      : { body: decision("escalate", { approval: { id, expires_at: new Date(Date.now() + 60_000).toISOString(), min_approvals: 1 } }) },
    { nativeApproval: true },
  );
  t.after(daemon.close);
  const out = await guard.beforeToolCall(exec("rm -rf ../x"), ctx);
  assert.equal(out.block, undefined);
  assert.deepEqual(out.params, { command: "rm -rf ../x" });
  assert.deepEqual(out.requireApproval.allowedDecisions, ["allow-once", "deny"]);
  assert.ok(out.requireApproval.timeoutMs > 50_000 && out.requireApproval.timeoutMs <= 60_000);
  await out.requireApproval.onResolution("allow-once");
  const relay = daemon.checks()[1].body;
  assert.deepEqual(relay, { tool: "toolgate_approve", params: { id, reason: "approved in OpenClaw's approval prompt (allow-once)" }, session: "agent:main:main", agent: "main" });
});

test("nativeApproval never stands in for R4 or a quorum", async (t) => {
  for (const extra of [{ risk: "R4" }, { approval: { id: "a".repeat(32), min_approvals: 2 } }]) {
    const { daemon, guard } = await setup(() => ({ body: decision("escalate", { approval: { id: "b".repeat(32), min_approvals: 1 }, ...extra }) }), { nativeApproval: true });
    t.after(daemon.close);
    const out = await guard.beforeToolCall(exec("rm -rf /etc"), ctx);
    assert.equal(out.block, true, JSON.stringify(extra));
    assert.equal(out.requireApproval, undefined);
  }
});

test("no answer is never an allow: every failure blocks and says why", async (t) => {
  const cases = [
    ["HTTP 500", () => ({ status: 500, body: { error: { code: "internal", message: "disk full" } } }), /HTTP 500: internal: disk full/],
    ["HTTP 401", () => ({ status: 401, body: { error: { code: "unauthorized", message: "bad token" } } }), /HTTP 401.*token from test/],
    ["not JSON", () => ({ body: "<html>proxy</html>" }), /not JSON/],
    ["no decision", () => ({ body: { decision: "maybe", reason: "x" } }), /no valid decision/],
    ["allow without reason", () => ({ body: { decision: "allow" } }), /no reason/],
    ["malformed params", () => ({ body: decision("allow", { params: ["rm"] }) }), /malformed params/],
    ["malformed approval", () => ({ body: decision("escalate", { approval: { id: 7 } }) }), /malformed approval/],
    ["an array", () => ({ body: [decision("allow")] }), /not a JSON object/],
    ["too slow", () => "hang", /did not answer within 1000 ms/],
  ];
  for (const [name, answer, why] of cases) {
    const { daemon, guard, logger } = await setup(answer);
    t.after(daemon.close);
    const out = await guard.beforeToolCall(exec("ls"), ctx);
    assert.equal(out.block, true, name);
    assert.match(out.blockReason, /^toolgate: blocked because toolgate could not check this call/, name);
    assert.match(out.blockReason, why, name);
    assert.ok(logger.lines.some((l) => l.startsWith("warn: toolgate: exec blocked")), name);
  }
});

test("an unreachable daemon or a missing token blocks", async (t) => {
  const { daemon, guard, settings } = await setup(() => ({ body: decision("allow") }));
  await daemon.close();
  const out = await guard.beforeToolCall(exec("ls"), ctx);
  assert.equal(out.block, true);
  assert.match(out.blockReason, /cannot reach toolgate at .*ECONNREFUSED.*toolgate serve/);

  const d2 = await fakeDaemon(() => ({ body: decision("allow") }));
  t.after(d2.close);
  const s2 = { ...settings, url: d2.url, token: { file: "/nonexistent/agent.token", source: "test" } };
  const g2 = new Guard({ pluginId: "toolgate", settings: s2, daemon: new Daemon(s2), canary: { activity() {}, hook() {}, tamper() {} }, logger: memoryLogger(), workspaceOf: () => undefined });
  const out2 = await g2.beforeToolCall(exec("ls"), ctx);
  assert.equal(out2.block, true);
  assert.match(out2.blockReason, /no agent token: cannot read \/nonexistent\/agent.token/);
  assert.equal(d2.requests.length, 0);
});

test("a cancelled tool call stops the check and blocks", async (t) => {
  const { daemon, guard } = await setup(() => "hang", {});
  t.after(daemon.close);
  const abort = new AbortController();
  const pending = guard.beforeToolCall(exec("ls"), { ...ctx, abortSignal: abort.signal });
  setTimeout(() => abort.abort(), 50);
  const out = await pending;
  assert.equal(out.block, true);
  assert.match(out.blockReason, /cancelled/);
});

test("params toolgate rewrote are what runs; keys it dropped are dropped", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("allow", { params: { command: "ls" } }) }));
  t.after(daemon.close);
  const out = await guard.beforeToolCall({ toolName: "exec", params: { command: "ls", elevated: true }, toolCallId: "c1" }, ctx);
  assert.deepEqual(Object.keys(out.params).sort(), ["command", "elevated"]);
  assert.equal(out.params.command, "ls");
  assert.equal(out.params.elevated, undefined);
  // OpenClaw merges over the original: the result is the rewrite.
  assert.deepEqual(JSON.parse(JSON.stringify({ command: "ls", elevated: true, ...out.params })), { command: "ls" });
});

test("tool_call is sent as the wrapped tool; the bridge's own inner call is not checked twice", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("allow") }));
  t.after(daemon.close);
  const outer = { toolName: "tool_call", params: { id: "exec", args: { command: "echo hi > m.txt" } }, toolCallId: "call_outer", runId: "run-1" };
  const out = await guard.beforeToolCall(outer, ctx);
  assert.deepEqual(out, { params: outer.params });
  assert.equal(daemon.checks().length, 1);
  assert.equal(daemon.checks()[0].body.tool, "exec");
  assert.deepEqual(daemon.checks()[0].body.params, { command: "echo hi > m.txt" });

  const inner = { toolName: "exec", params: { command: "echo hi > m.txt" }, toolCallId: "tool_search_code:call_outer:exec:1", runId: "run-1" };
  assert.deepEqual(await guard.beforeToolCall(inner, ctx), { params: inner.params });
  assert.equal(daemon.checks().length, 1, "no second check");
  // Once only, and only for the exact params judged.
  await guard.beforeToolCall(inner, ctx);
  assert.equal(daemon.checks().length, 2);
  const other = { ...inner, params: { command: "rm -rf ~" }, toolCallId: "tool_search_code:call_outer:exec:2" };
  await guard.beforeToolCall(other, ctx);
  assert.equal(daemon.checks().length, 3);
});

test("a bridged call toolgate rewrote is blocked (the rewrite cannot be put back into tool_call)", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("allow", { params: { command: "ls" } }) }));
  t.after(daemon.close);
  const out = await guard.beforeToolCall({ toolName: "tool_call", params: { id: "exec", args: { command: "ls -R /" } }, toolCallId: "x" }, ctx);
  assert.equal(out.block, true);
  assert.match(out.blockReason, /call exec directly/);
});

test("the relay tool itself is not checked (the daemon judges the relay when it runs)", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("block") }));
  t.after(daemon.close);
  const direct = await guard.beforeToolCall({ toolName: "toolgate_approve", params: { id: "a".repeat(32) }, toolCallId: "r1" }, ctx);
  assert.deepEqual(direct, { params: { id: "a".repeat(32) } });
  const bridged = await guard.beforeToolCall({ toolName: "tool_call", params: { id: "toolgate_approve", args: { id: "a".repeat(32) } }, toolCallId: "r2" }, ctx);
  assert.equal(bridged.block, undefined);
  assert.equal(daemon.checks().length, 0);
});

test("after_tool_call: params that differ from the judged ones are reported", async (t) => {
  const { daemon, guard, logger, canary } = await setup(() => ({ body: decision("allow") }));
  t.after(daemon.close);
  await guard.beforeToolCall({ toolName: "exec", params: { b: 2, command: "echo hi" }, toolCallId: "t1", runId: "run-1" }, ctx);
  guard.afterToolCall({ toolName: "exec", params: { command: "echo hi", b: 2 }, toolCallId: "t1", runId: "run-1" }, ctx);
  assert.deepEqual(canary.events.filter((e) => e.startsWith("tamper")), [], "same params, other key order: fine");

  await guard.beforeToolCall({ toolName: "exec", params: { command: "echo hi" }, toolCallId: "t2", runId: "run-1" }, ctx);
  guard.afterToolCall({ toolName: "exec", params: { command: "echo tampered" }, toolCallId: "t2", runId: "run-1" }, ctx);
  const tampers = canary.events.filter((e) => e.startsWith("tamper"));
  assert.equal(tampers.length, 1);
  assert.match(tampers[0], /params that ran differ from the params toolgate judged: exec call t2/);
  assert.match(tampers[0], /echo tampered/);
  assert.ok(logger.lines.some((l) => l.startsWith("error: toolgate: TAMPER: params that ran differ")));
});

test("after_tool_call: a blocked call did not run; a call the hook never saw is reported", async (t) => {
  const { daemon, guard, canary } = await setup(() => ({ body: decision("block") }));
  t.after(daemon.close);
  await guard.beforeToolCall({ toolName: "exec", params: { command: "rm -rf /" }, toolCallId: "b1", runId: "run-1" }, ctx);
  guard.afterToolCall({ toolName: "exec", params: { command: "rm -rf /" }, toolCallId: "b1", runId: "run-1", result: { details: { status: "blocked" } } }, ctx);
  guard.afterToolCall({ toolName: "exec", params: { command: "x" }, toolCallId: "other-blocked", result: { details: { status: "blocked" } } }, ctx);
  assert.deepEqual(canary.events.filter((e) => e.startsWith("tamper")), []);
  guard.afterToolCall({ toolName: "exec", params: { command: "whoami" }, toolCallId: "never-seen", runId: "run-1" }, ctx);
  assert.match(canary.events.at(-1), /tamper: exec ran \(call never-seen\) but toolgate's before_tool_call never saw it/);
});

test("the workspace of the run (from the agent hooks) is the call's cwd", async (t) => {
  const { daemon, guard, canary } = await setup(() => ({ body: decision("allow") }));
  t.after(daemon.close);
  guard.noteAgent({ runId: "run-9", sessionKey: "s9", workspaceDir: "/agents/nine" });
  await guard.beforeToolCall(exec("ls"), { ...ctx, runId: "run-9" });
  await guard.beforeToolCall(exec("ls"), { ...ctx, runId: "run-10", sessionKey: "s9" });
  await guard.beforeToolCall(exec("ls"), { ...ctx, runId: "run-11", sessionKey: "s11" });
  assert.deepEqual(daemon.checks().map((r) => r.body.cwd), ["/agents/nine", "/agents/nine", "/config/ws"]);
  assert.equal(canary.events[0], "activity");
});

test("other relay names are never sent to the daemon (a check of one is a relayed approval)", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("allow") }), { approveTool: false });
  t.after(daemon.close);
  for (const event of [
    { toolName: "toolgate_approve", params: { id: "a".repeat(32) }, toolCallId: "x1" },
    { toolName: "tool_call", params: { id: "toolgate_approve", args: { id: "a".repeat(32) } }, toolCallId: "x2" },
    { toolName: "ga_approve", params: { nonce: "a".repeat(32) }, toolCallId: "x3" },
  ]) {
    const out = await guard.beforeToolCall(event, ctx);
    assert.equal(out.block, true, event.toolName);
    assert.match(out.blockReason, /would relay an approval/);
  }
  assert.equal(daemon.checks().length, 0);
});

test("the acknowledgement tool itself is not checked (the check would be the acknowledgement)", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("block") }));
  t.after(daemon.close);
  const id = "c".repeat(32);
  const direct = await guard.beforeToolCall({ toolName: "toolgate_ack", params: { id }, toolCallId: "k1" }, ctx);
  assert.deepEqual(direct, { params: { id } });
  const outer = { toolName: "tool_call", params: { id: "toolgate_ack", args: { id } }, toolCallId: "k2" };
  const bridged = await guard.beforeToolCall(outer, ctx);
  assert.deepEqual(bridged, { params: outer.params });
  const inner = await guard.beforeToolCall({ toolName: "toolgate_ack", params: { id }, toolCallId: "tool_search_code:k2:toolgate_ack:1" }, ctx);
  assert.deepEqual(inner, { params: { id } });
  assert.equal(daemon.checks().length, 0);
});

test("with ackTool off, toolgate_ack is blocked and never sent to the daemon", async (t) => {
  const { daemon, guard } = await setup(() => ({ body: decision("allow") }), { ackTool: false });
  t.after(daemon.close);
  for (const event of [
    { toolName: "toolgate_ack", params: { id: "c".repeat(32) }, toolCallId: "y1" },
    { toolName: "tool_call", params: { id: "toolgate_ack", args: { id: "c".repeat(32) } }, toolCallId: "y2" },
    { toolName: "tool_call", params: { toolId: "openclaw:plugin:toolgate_ack", args: { id: "c".repeat(32) } }, toolCallId: "y3" },
  ]) {
    const out = await guard.beforeToolCall(event, ctx);
    assert.equal(out.block, true, JSON.stringify(event));
    assert.match(out.blockReason, /toolgate_ack would acknowledge knowledge/);
    assert.match(out.blockReason, /ackTool: false/);
    assert.match(out.blockReason, /Retry exactly the same call/);
  }
  assert.equal(daemon.checks().length, 0);
});

test("knowledge to acknowledge: the block shows it and how to acknowledge it", async (t) => {
  const id = "0123456789abcdef0123456789abcdef";
  const held = decision("block", {
    layer: "knowledge",
    reason: "knowledge must be acknowledged before this call runs: SOP deploy",
    block_reason: `TOOLGATE_ACK|${id}|knowledge must be acknowledged before this call runs: SOP deploy`,
    context: "## SOP deploy\nAlways tag the release first.",
  });
  const { daemon, guard } = await setup(() => ({ body: held }));
  t.after(daemon.close);
  const out = await guard.beforeToolCall(exec("./deploy.sh"), ctx);
  assert.equal(out.block, true);
  const lines = out.blockReason.split("\n");
  assert.equal(lines[0], "toolgate: knowledge must be acknowledged before this call runs: SOP deploy");
  assert.equal(lines[1], held.block_reason);
  assert.ok(out.blockReason.includes("## SOP deploy\nAlways tag the release first."));
  assert.equal(
    lines.at(-1),
    `To acknowledge this knowledge once you have read it: retry exactly the same call, or call toolgate_ack with {"id": "${id}"} and then retry exactly the same call.`,
  );

  const off = blockText(held, false).split("\n").at(-1);
  assert.match(off, /retry exactly the same call/);
  assert.match(off, /toolgate_ack is switched off here/);
  assert.doesNotMatch(off, /\{"id"/);
  // Other blocks get no such line.
  assert.equal(blockText(decision("block"), true), "toolgate: blocked: no\nTOOLGATE_BLOCK|blocked: no");
});
