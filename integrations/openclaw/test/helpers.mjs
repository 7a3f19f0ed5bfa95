// Shared test helpers: a scripted stand-in for `toolgate serve`, a logger
// that remembers, and settings pointing at the stand-in.
import { createServer } from "node:http";

/**
 * A fake daemon on 127.0.0.1. `answer(req)` gets {method, path, headers, body}
 * and returns {status, body} (body: object → JSON, string → as is) or
 * "hang" to never answer. Every request is kept in `requests`.
 */
export async function fakeDaemon(answer) {
  const requests = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      let body;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      const r = { method: req.method, path: req.url, headers: req.headers, body };
      requests.push(r);
      const out = await answer(r);
      if (out === "hang") return;
      const text = typeof out.body === "string" ? out.body : JSON.stringify(out.body);
      res.writeHead(out.status ?? 200, { "content-type": typeof out.body === "string" ? "text/plain" : "application/json" });
      res.end(text);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    checks: () => requests.filter((r) => r.path.startsWith("/v1/check")),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** A logger that keeps what it was told. */
export function memoryLogger() {
  const lines = [];
  const at = (level) => (m) => lines.push(`${level}: ${m}`);
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** Settings for a fake daemon at `url`. */
export function settingsFor(url, extra = {}) {
  return {
    url,
    token: { value: "agent-token-for-tests", source: "test" },
    timeoutMs: 1000,
    approveTool: true,
    ackTool: true,
    protocol: true,
    nativeApproval: false,
    ...extra,
  };
}

/** A decision as the daemon sends it. */
export function decision(verdict, extra = {}) {
  const reason = { allow: "allowed: fine", block: "blocked: no", escalate: "needs approval: maybe" }[verdict];
  return {
    decision: verdict,
    risk: verdict === "allow" ? "R1" : "R3",
    score: 10,
    layer: "exec",
    reason,
    ...(verdict === "block" ? { block_reason: `TOOLGATE_BLOCK|${reason}` } : {}),
    elapsed_us: 5,
    ...extra,
  };
}
