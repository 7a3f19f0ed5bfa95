// Settings: plugin config first, then the environment, then defaults.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readToken, resolveSettings } from "../dist/config.js";

test("defaults", () => {
  const s = resolveSettings(undefined, { HOME: "/home/u" });
  assert.equal(s.url, "http://127.0.0.1:7878");
  assert.equal(s.timeoutMs, 8000);
  assert.equal(s.waitSeconds, undefined);
  assert.deepEqual([s.approveTool, s.ackTool, s.protocol, s.nativeApproval], [true, true, true, false]);
  assert.deepEqual(s.token, { file: "/home/u/.local/state/toolgate/agent.token", source: "toolgate's data dir" });
});

test("the environment fills in what the config leaves out", () => {
  const s = resolveSettings({}, { TOOLGATE_URL: "http://127.0.0.1:1234/", TOOLGATE_AGENT_TOKEN: "from-env-0123456789" });
  assert.equal(s.url, "http://127.0.0.1:1234");
  assert.deepEqual(s.token, { value: "from-env-0123456789", source: "$TOOLGATE_AGENT_TOKEN" });
  assert.equal(resolveSettings({}, { TOOLGATE_DATA_DIR: "/d" }).token.file, "/d/agent.token");
  assert.equal(resolveSettings({}, { XDG_STATE_HOME: "/x" }).token.file, "/x/toolgate/agent.token");
});

test("the config wins over the environment", () => {
  const s = resolveSettings({ url: "https://gate.example:8443", token: "cfg-token-0123456789", timeoutMs: 2000, wait: 30, nativeApproval: true }, { TOOLGATE_URL: "http://127.0.0.1:1", TOOLGATE_AGENT_TOKEN: "env" });
  assert.equal(s.url, "https://gate.example:8443");
  assert.equal(s.token.value, "cfg-token-0123456789");
  assert.equal(s.timeoutMs, 2000);
  assert.equal(s.waitSeconds, 30);
  assert.equal(s.nativeApproval, true);
  assert.equal(resolveSettings({ ackTool: false }, {}).ackTool, false);
});

test("settings that cannot work are refused with the fix", () => {
  assert.throws(() => resolveSettings({ url: "ftp://x" }, {}), /must be http/);
  assert.throws(() => resolveSettings({ timeoutMs: 20000 }, {}), /timeoutMs must be an integer in 100..14000/);
  assert.throws(() => resolveSettings({ wait: 0 }, {}), /wait must be an integer in 1..600/);
  assert.throws(() => resolveSettings({ protocol: "no" }, {}), /protocol must be true or false/);
  assert.throws(() => resolveSettings({ ackTool: "yes" }, {}), /ackTool must be true or false/);
  assert.throws(() => resolveSettings({ token: 42 }, {}), /token must be a string/);
});

test("a token file is read at each use", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-oc-test-"));
  const file = join(dir, "agent.token");
  const s = resolveSettings({ tokenFile: file }, {});
  assert.throws(() => readToken(s), /no agent token: cannot read .*ENOENT/);
  writeFileSync(file, "first-token-0123456789\n");
  assert.equal(readToken(s), "first-token-0123456789");
  writeFileSync(file, "second-token-0123456789");
  assert.equal(readToken(s), "second-token-0123456789");
  writeFileSync(file, "  \n");
  assert.throws(() => readToken(s), /is empty/);
});
