// How OpenClaw's hook events become toolgate ToolCalls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bridgeKey, bridgeParentOf, canonicalJson, targetOf, toolCall } from "../dist/calls.js";

test("a direct call is judged as it is", () => {
  assert.deepEqual(targetOf("exec", { command: "ls" }), { tool: "exec", params: { command: "ls" }, bridged: false });
});

test("tool_call is judged as the call it wraps", () => {
  const cases = [
    [{ id: "exec", args: { command: "rm -rf /" } }, "exec", { command: "rm -rf /" }],
    [{ id: "openclaw:core:exec", args: { command: "ls" } }, "exec", { command: "ls" }],
    [{ toolId: "write", input: { path: "a", content: "b" } }, "write", { path: "a", content: "b" }],
    [{ name: "exec", command: "ls -la" }, "exec", { command: "ls -la" }], // flattened arguments
    [{ id: "exec", args: {}, command: "ls" }, "exec", { command: "ls" }], // empty args: flattened
    [{ id: "exec", "args.command": "ls", args: { workdir: "/x" } }, "exec", { command: "ls", workdir: "/x" }],
    [{ id: "exec", args: '{"command":"ls"}' }, "exec", { command: "ls" }], // args as a JSON string
    [{ args: { id: "exec", command: "ls" } }, "exec", { command: "ls" }], // selector nested in args
  ];
  for (const [params, tool, inner] of cases) {
    const t = targetOf("tool_call", params);
    assert.equal(t.tool, tool, JSON.stringify(params));
    assert.deepEqual(t.params, inner, JSON.stringify(params));
    assert.equal(t.bridged, true);
  }
});

test("nested bridges unwrap to the innermost call", () => {
  const t = targetOf("tool_call", { id: "tool_call", args: { id: "exec", args: { command: "rm -rf ~" } } });
  assert.deepEqual(t, { tool: "exec", params: { command: "rm -rf ~" }, bridged: true });
});

test("a bridge call without a target is judged as it is", () => {
  assert.deepEqual(targetOf("tool_call", { args: { command: "ls" } }), {
    tool: "tool_call",
    params: { args: { command: "ls" } },
    bridged: false,
  });
});

test("the call the bridge makes is traced to its parent", () => {
  const parent = "call_ab c/1";
  const child = `tool_search_code:${bridgeKey(parent)}:exec:1`;
  assert.equal(bridgeParentOf(child, "exec"), bridgeKey(parent));
  assert.equal(bridgeParentOf(child, "write"), undefined);
  assert.equal(bridgeParentOf("call_1", "exec"), undefined);
  assert.equal(bridgeParentOf(undefined, "exec"), undefined);
});

test("canonical JSON ignores key order at every depth, not values", () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: "s" } }), '{"a":{"c":"s","d":[1,{"x":1,"y":2}]},"b":1}');
  assert.equal(canonicalJson({ a: 1, b: undefined }), canonicalJson({ a: 1 }));
  assert.notEqual(canonicalJson({ a: { b: 1 } }), canonicalJson({ a: { b: 2 } }));
  assert.notEqual(canonicalJson({ command: "ls" }), canonicalJson({ command: "ls", elevated: true }));
  assert.equal(canonicalJson([undefined, NaN]), "[null,null]");
});

test("the ToolCall carries who, where and which call", () => {
  const call = toolCall(
    { tool: "exec", params: { command: "ls" }, bridged: false },
    { toolName: "exec", params: { command: "ls" }, toolCallId: "call_1" },
    {
      agentId: "main",
      sessionKey: "agent:main:main",
      sessionId: "uuid",
      channelId: "chat-42",
      requester: { channel: "telegram", senderId: "u1", senderIsOwner: true, roleIds: ["admin"] },
    },
    { cwd: "/ws" },
  );
  assert.deepEqual(call, {
    tool: "exec",
    params: { command: "ls" },
    call_id: "call_1",
    agent: "main",
    session: "agent:main:main",
    channel: "telegram",
    cwd: "/ws",
    requester: { id: "u1", role: "owner" },
  });
});

test("an unproven owner bit is not an owner; the session falls back to the session id", () => {
  const call = toolCall(
    { tool: "exec", params: {}, bridged: false },
    { toolName: "exec", params: {} },
    { sessionId: "uuid", channelId: "chat-42", requester: { senderId: "u2", roleIds: ["guest"] } },
    {},
  );
  assert.equal(call.session, "uuid");
  assert.equal(call.channel, "chat-42");
  assert.deepEqual(call.requester, { id: "u2", role: "guest" });
  const bare = toolCall({ tool: "exec", params: {}, bridged: false }, { toolName: "exec", params: {} }, { requester: { senderIsOwner: false } }, {});
  assert.deepEqual(bare.requester, {});
});

// The corpus of bridge shapes toolgate-core's tests read too
// (crates/toolgate-core/tests/corpus/tool_call_shapes.json): the plugin
// unwraps each `tool_call` bridge to the same inner call the daemon judges.
// Other bridge names (`toolCall`, `call_tool`, MCP gateways) are not
// OpenClaw's: the plugin sends them as they are and the daemon unwraps them.
test("every bridge shape in the shared corpus unwraps as toolgate-core does", async () => {
  const { readFile } = await import("node:fs/promises");
  const url = new URL("../../../crates/toolgate-core/tests/corpus/tool_call_shapes.json", import.meta.url);
  const cases = JSON.parse(await readFile(url, "utf8"));
  let checked = 0;
  for (const c of cases) {
    if (!c.inner) continue;
    const t = targetOf(c.call.tool, c.call.params);
    if (c.call.tool !== "tool_call") {
      assert.equal(t.bridged, false, c.note);
      assert.equal(t.tool, c.call.tool, c.note);
      continue;
    }
    const inner = c.inner.tool === "tool_call" ? targetOf(c.inner.tool, c.inner.params) : c.inner;
    assert.equal(t.tool, inner.tool, c.note);
    assert.deepEqual(t.params, inner.params, c.note);
    assert.equal(t.bridged, true, c.note);
    checked++;
  }
  assert.ok(checked >= 30, `only ${checked} bridge cases checked`);
});
