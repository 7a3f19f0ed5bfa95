// register(api) against a stand-in of OpenClaw's plugin API.
import { test } from "node:test";
import assert from "node:assert/strict";
import plugin from "../dist/index.js";
import { decision, fakeDaemon, memoryLogger } from "./helpers.mjs";

function fakeApi(pluginConfig) {
  const hooks = [];
  const tools = [];
  const logger = memoryLogger();
  return {
    hooks,
    tools,
    logger,
    api: {
      id: "toolgate",
      registrationMode: "full",
      pluginConfig,
      logger,
      config: {},
      runtime: { agent: { resolveAgentWorkspaceDir: (_cfg, agentId) => `/workspaces/${agentId}` } },
      on: (name, handler, options) => hooks.push({ name, handler, options }),
      registerTool: (tool, options) => tools.push({ tool, options }),
    },
    hook: (name) => hooks.find((h) => h.name === name),
  };
}

test("the manifest, package.json and entry agree", async () => {
  const { readFile } = await import("node:fs/promises");
  const manifest = JSON.parse(await readFile(new URL("../openclaw.plugin.json", import.meta.url)));
  const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url)));
  assert.equal(manifest.id, plugin.id);
  assert.equal(pkg.type, "module");
  assert.deepEqual(pkg.openclaw.extensions, ["./dist/index.js"]);
  assert.deepEqual(manifest.contracts.tools, ["toolgate_approve", "toolgate_ack"]);
  assert.equal(manifest.activation.onStartup, true);
  assert.deepEqual(Object.keys(manifest.configSchema.properties).sort(), ["ackTool", "approveTool", "nativeApproval", "protocol", "timeoutMs", "token", "tokenFile", "url", "wait"]);
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), [], "no runtime dependencies");
});

test("register: toolgate runs last, checks after, builds the prompt, offers the relay and acknowledgement tools", async (t) => {
  const daemon = await fakeDaemon((r) => (r.path === "/v1/protocol" ? { body: "toolgate checks every tool call before it runs.\n" } : r.path === "/v1/canary" ? { body: { ok: true } } : { body: decision("allow") }));
  t.after(daemon.close);
  const f = fakeApi({ url: daemon.url, token: "agent-token-for-tests" });
  plugin.register(f.api);
  const before = f.hook("before_tool_call");
  assert.equal(before.options.priority, Number.MIN_SAFE_INTEGER);
  assert.equal(before.options.timeoutMs, undefined, "OpenClaw's own 15 s when not waiting");
  assert.ok(f.hook("after_tool_call"));
  assert.ok(f.hook("model_call_started"));
  assert.ok(f.hook("gateway_start"));

  const prompt = await f.hook("before_prompt_build").handler({ prompt: "hi", messages: [] }, { runId: "r1", workspaceDir: "/ws/r1" });
  assert.deepEqual(prompt, { appendSystemContext: "toolgate checks every tool call before it runs.\n" });
  await f.hook("before_prompt_build").handler({ prompt: "hi", messages: [] }, { runId: "r1" });
  assert.equal(daemon.requests.filter((r) => r.path === "/v1/protocol").length, 1, "fetched once, then cached");

  const out = await before.handler({ toolName: "exec", params: { command: "ls" }, toolCallId: "c1" }, { runId: "r1", agentId: "main" });
  assert.deepEqual(out, { params: { command: "ls" } });
  assert.equal(daemon.checks()[0].body.cwd, "/ws/r1");

  assert.equal(f.tools.length, 2);
  assert.deepEqual(f.tools[0].options, { name: "toolgate_approve" });
  const tool = f.tools[0].tool({ sessionKey: "agent:main:main", agentId: "main" });
  assert.equal(tool.name, "toolgate_approve");
  assert.deepEqual(tool.parameters.required, ["id"]);
  const res = await tool.execute("t1", { id: " abc ", reason: "user said yes" });
  assert.equal(res.content[0].text, "toolgate: allowed: fine");
  assert.deepEqual(daemon.checks().at(-1).body, { tool: "toolgate_approve", params: { id: "abc", reason: "user said yes" }, session: "agent:main:main", agent: "main" });

  assert.deepEqual(f.tools[1].options, { name: "toolgate_ack" });
  const ack = f.tools[1].tool({ sessionKey: "agent:main:main", agentId: "main" });
  assert.equal(ack.name, "toolgate_ack");
  assert.deepEqual(ack.parameters.required, ["id"]);
  const acked = await ack.execute("t2", { id: "abc" });
  assert.equal(acked.content[0].text, "toolgate: allowed: fine");
  assert.deepEqual(daemon.checks().at(-1).body, { tool: "toolgate_ack", params: { id: "abc" }, session: "agent:main:main", agent: "main" });
});

test("register with wait: the handler's timeout covers the wait", () => {
  const f = fakeApi({ url: "http://127.0.0.1:9", token: "x".repeat(20), wait: 60, timeoutMs: 5000 });
  plugin.register(f.api);
  assert.equal(f.hook("before_tool_call").options.timeoutMs, 67_000);
});

test("options switch the prompt hook and the relay and acknowledgement tools off", () => {
  const f = fakeApi({ url: "http://127.0.0.1:9", token: "x".repeat(20), protocol: false, approveTool: false, ackTool: false });
  plugin.register(f.api);
  assert.equal(f.hook("before_prompt_build"), undefined);
  assert.equal(f.tools.length, 0);

  const onlyAck = fakeApi({ url: "http://127.0.0.1:9", token: "x".repeat(20), approveTool: false });
  plugin.register(onlyAck.api);
  assert.deepEqual(onlyAck.tools.map((t) => t.options.name), ["toolgate_ack"]);
});

test("no protocol text: the prompt goes on without it", async () => {
  const f = fakeApi({ url: "http://127.0.0.1:9", token: "x".repeat(20) });
  plugin.register(f.api);
  assert.equal(await f.hook("before_prompt_build").handler({ prompt: "", messages: [] }, {}), undefined);
  assert.ok(f.logger.lines.some((l) => l.startsWith("warn: toolgate: no rules text for the prompt")));
});

test("a misconfigured plugin blocks every call instead of leaving the agent unguarded", async () => {
  for (const config of [{ url: "ftp://x" }, { url: "not a url" }, { timeoutMs: 99_999 }, { approveTool: "yes" }, { ackTool: 1 }]) {
    const f = fakeApi(config);
    plugin.register(f.api);
    const before = f.hook("before_tool_call");
    assert.equal(before.options.priority, Number.MIN_SAFE_INTEGER);
    const out = await before.handler({ toolName: "read", params: { path: "a" } }, {});
    assert.equal(out.block, true, JSON.stringify(config));
    assert.match(out.blockReason, /^toolgate: blocked: the toolgate plugin is misconfigured/);
    assert.equal(f.hooks.length, 1);
  }
});
