// The toolgate_ack tool: acknowledges knowledge toolgate showed, in the
// scope of the call it held.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ackTool } from "../dist/ack.js";
import { Daemon } from "../dist/daemon.js";
import { Guard } from "../dist/guard.js";
import { decision, fakeDaemon, memoryLogger, settingsFor } from "./helpers.mjs";

const ID = "0123456789abcdef0123456789abcdef";
const held = () =>
  decision("block", {
    layer: "knowledge",
    reason: "knowledge must be acknowledged before this call runs: SOP deploy",
    block_reason: `TOOLGATE_ACK|${ID}|knowledge must be acknowledged before this call runs: SOP deploy`,
    context: `## SOP deploy\nAlways tag the release first.\n\nTo acknowledge: retry exactly the same call within 5m, or acknowledge id ${ID}.`,
  });
const acked = () => decision("allow", { reason: `knowledge ${ID} acknowledged for 5m; retry the call` });

async function setup(answer, extra = {}) {
  const daemon = await fakeDaemon(answer);
  const settings = settingsFor(daemon.url, extra);
  const client = new Daemon(settings);
  const guard = new Guard({ pluginId: "toolgate", settings, daemon: client, canary: { activity() {}, hook() {}, tamper() {} }, logger: memoryLogger(), workspaceOf: () => undefined });
  return { daemon, client, guard };
}

test("the tool's shape: toolgate_ack {id} only", () => {
  const tool = ackTool(new Daemon(settingsFor("http://127.0.0.1:9")), {});
  assert.equal(tool.name, "toolgate_ack");
  assert.ok(tool.label);
  assert.match(tool.description, /TOOLGATE_ACK/);
  assert.match(tool.description, /retry exactly the same call/);
  assert.deepEqual(tool.parameters.required, ["id"]);
  assert.deepEqual(Object.keys(tool.parameters.properties), ["id"]);
  assert.equal(tool.parameters.additionalProperties, false);
});

test("execute sends toolgate_ack {id} with the session and agent the guard sends for the held call", async (t) => {
  const { daemon, client, guard } = await setup((r) => (r.body.tool === "toolgate_ack" ? { body: acked() } : { body: held() }));
  t.after(daemon.close);
  for (const ctx of [
    { agentId: "main", sessionKey: "agent:main:main", sessionId: "uuid-1" },
    { agentId: "main", sessionId: "uuid-2" },
    { agentId: "main" },
    {},
  ]) {
    const blocked = await guard.beforeToolCall({ toolName: "exec", params: { command: "deploy" }, toolCallId: "c1" }, ctx);
    assert.equal(blocked.block, true);
    const res = await ackTool(client, ctx).execute("t1", { id: ` ${ID} ` });
    assert.equal(res.content[0].text, `toolgate: knowledge ${ID} acknowledged for 5m; retry the call`);
    assert.deepEqual(res.details, { decision: "allow" });
    const [checked, ack] = daemon.checks().slice(-2).map((r) => r.body);
    assert.equal(checked.tool, "exec");
    assert.deepEqual(ack, {
      tool: "toolgate_ack",
      params: { id: ID },
      ...(checked.session ? { session: checked.session } : {}),
      ...(checked.agent ? { agent: checked.agent } : {}),
    });
    assert.equal(ack.session, checked.session, JSON.stringify(ctx));
    assert.equal(ack.agent, checked.agent, JSON.stringify(ctx));
  }
  assert.equal(daemon.checks()[0].body.session, "agent:main:main");
  assert.equal(daemon.checks()[2].body.session, "uuid-2");
});

test("a refused acknowledgement is the daemon's reason", async (t) => {
  const { daemon, client } = await setup(() => ({
    body: decision("block", { reason: `knowledge ${ID} was shown to another session; it acknowledges its own`, block_reason: undefined }),
  }));
  t.after(daemon.close);
  const res = await ackTool(client, { sessionKey: "s2", agentId: "main" }).execute("t1", { id: ID });
  assert.equal(res.content[0].text, `toolgate: knowledge ${ID} was shown to another session; it acknowledges its own`);
  assert.deepEqual(res.details, { decision: "block" });
});

test("no id: nothing is sent", async (t) => {
  const { daemon, client } = await setup(() => ({ body: acked() }));
  t.after(daemon.close);
  for (const params of [{}, { id: "" }, { id: "   " }, { id: 42 }]) {
    const res = await ackTool(client, { sessionKey: "s" }).execute("t1", params);
    assert.match(res.content[0].text, /^toolgate: toolgate_ack needs \{"id": "<id>"\} from the TOOLGATE_ACK line/);
  }
  assert.equal(daemon.checks().length, 0);
});

test("no answer from the daemon: not acknowledged, and retrying the call still is a way", async (t) => {
  const { daemon, client } = await setup(() => ({ status: 500, body: { error: { code: "internal", message: "disk full" } } }));
  t.after(daemon.close);
  const res = await ackTool(client, { sessionKey: "s" }).execute("t1", { id: ID });
  assert.match(res.content[0].text, /^toolgate: the knowledge was not acknowledged: .*HTTP 500: internal: disk full/);
  assert.match(res.content[0].text, /Retrying exactly the same call also acknowledges it/);
  assert.deepEqual(res.details, { decision: "error" });

  await daemon.close();
  const down = await ackTool(client, { sessionKey: "s" }).execute("t2", { id: ID });
  assert.match(down.content[0].text, /not acknowledged: cannot reach toolgate/);
  assert.deepEqual(down.details, { decision: "error" });
});
