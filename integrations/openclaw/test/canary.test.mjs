// The liveness canary: once per process, reports to POST /v1/canary, warns
// by itself when the hook stays silent. (Its state is per process, so these
// tests have their own file: node --test runs each file in its own process.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { Canary, INSTANCE } from "../dist/canary.js";
import { Daemon } from "../dist/daemon.js";
import { fakeDaemon, memoryLogger, settingsFor } from "./helpers.mjs";

const settle = () => new Promise((r) => setTimeout(r, 50));

test("start, activity and hook are reported once each; silence after activity is warned about", async (t) => {
  const daemon = await fakeDaemon(() => ({ body: { ok: true } }));
  t.after(daemon.close);
  const logger = memoryLogger();
  const a = new Canary(new Daemon(settingsFor(daemon.url)), logger, 100);
  const b = new Canary(new Daemon(settingsFor(daemon.url)), logger, 100); // a second registration, same process
  a.start();
  b.start();
  b.activity();
  a.activity();
  await new Promise((r) => setTimeout(r, 250));
  assert.ok(logger.lines.some((l) => /^warn: toolgate: before_tool_call has not fired 0 s after the agent's first activity/.test(l)), logger.lines.join("\n"));
  a.hook();
  b.hook();
  a.tamper("x changed");
  b.tamper("x changed");
  a.tamper("y changed");
  await settle();
  const sent = daemon.requests.map((r) => [r.path, r.body.event, r.body.detail ?? null]);
  // start and activity went out 250 ms apart; hook and the two tampers
  // are fire-and-forget posts made together, so they may arrive in any order.
  assert.deepEqual(sent.slice(0, 2), [
    ["/v1/canary", "start", null],
    ["/v1/canary", "activity", null],
  ]);
  const byText = (x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y));
  assert.deepEqual(sent.slice(2).sort(byText), [
    ["/v1/canary", "hook", null],
    ["/v1/canary", "tamper", "x changed"],
    ["/v1/canary", "tamper", "y changed"],
  ].sort(byText));
  for (const r of daemon.requests) {
    assert.equal(r.body.runtime, "openclaw");
    assert.equal(r.body.instance, INSTANCE);
    assert.deepEqual(Object.keys(r.body).sort(), r.body.detail ? ["detail", "event", "instance", "runtime"] : ["event", "instance", "runtime"]);
  }
});

test("a canary that cannot reach the daemon logs and goes on", async () => {
  const logger = memoryLogger();
  const c = new Canary(new Daemon(settingsFor("http://127.0.0.1:9")), logger, 100);
  c.tamper("z changed");
  c.tamper("w changed");
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(logger.lines.filter((l) => l.startsWith("warn: toolgate: could not report \"tamper\"")).length, 1, logger.lines.join("\n"));
  assert.equal(logger.lines.filter((l) => l.startsWith("debug: toolgate: could not report \"tamper\"")).length, 1);
});

test("a detail longer than the daemon keeps is cut", async (t) => {
  const daemon = await fakeDaemon(() => ({ body: { ok: true } }));
  t.after(daemon.close);
  new Canary(new Daemon(settingsFor(daemon.url)), memoryLogger()).tamper("a".repeat(5000));
  await settle();
  assert.equal(daemon.requests[0].body.detail.length, 1000);
});
