#!/usr/bin/env python3
"""A scripted stand-in for an OpenAI-compatible Chat Completions API, enough
for one OpenClaw agent turn (Python 3 standard library only).

    fake_openai.py PORT_FILE LOG_FILE [PORT_MIN PORT_MAX]

Listens on 127.0.0.1, on the first free port in [PORT_MIN, PORT_MAX]
(default 21000-21999, tried in random order), and writes the port to
PORT_FILE once it accepts connections.

The script of a turn comes from the prompt: the latest user message that
holds `<<<RUN:command>>>` is the real one (OpenClaw adds user turns of its own
after it, e.g. internal context), and only tool calls and results after it
count, so one conversation can hold several turns. Until a tool result
follows that message, the model calls the command, streamed as SSE the way
the real API does:

  - `exec` {command} when the request offers `exec` directly;
  - otherwise `tool_call` {id: "exec", args: {command}} when it offers Tool
    Search's bridge;
  - otherwise it answers with text (nothing to call).

`<<<VIA:exec>>>` or `<<<VIA:tool_call>>>` in the same message picks one of
the two (and nothing is called when that one is not offered). With
`<<<APPROVE>>>` the model plays a user who approves: when the first result
carries `TOOLGATE_ESCALATE|<id>|`, it calls `toolgate_approve` {id} (directly
or through `tool_call`, whichever is offered), then retries the command once.
After the last step the model answers `FAKE-MODEL-DONE` and ends the turn.

Every request is appended to LOG_FILE as one JSON line {"path", "kind",
"via", "name", "step", "command", "tools", "system_has_probe", "tool_result",
"results"} so a test can say which tools the model was offered, which one it
called, whether toolgate's rules text reached the system prompt, and what
OpenClaw sent back as each result (e.g. toolgate's block reason). With
FAKE_DUMP_DIR set, each request body is also written there whole.
"""

import json
import os
import random
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MARKER = re.compile(r"<<<RUN:(.*?)>>>", re.S)
VIA = re.compile(r"<<<VIA:(exec|tool_call)>>>")
APPROVE = "<<<APPROVE>>>"
ESCALATION = re.compile(r"TOOLGATE_ESCALATE\|([0-9a-f]{32})\|")
# Text the test looks for in the system prompt (toolgate's protocol text).
SYSTEM_PROBE = os.environ.get("FAKE_SYSTEM_PROBE", "TOOLGATE_")
LOG_LOCK = threading.Lock()


def texts(content):
    """Every text inside a message's content (a string or a list of parts)."""
    if isinstance(content, str):
        yield content
        return
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            yield part["text"]
        elif isinstance(part, str):
            yield part


def offered_tools(req):
    names = []
    for t in req.get("tools") or []:
        if isinstance(t, dict):
            fn = t.get("function") if isinstance(t.get("function"), dict) else t
            if isinstance(fn.get("name"), str):
                names.append(fn["name"])
    return names


def chunk(model, cid, delta, finish=None):
    return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def sse(chunks):
    return "".join("data: %s\n\n" % json.dumps(c) for c in chunks).encode() + b"data: [DONE]\n\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_file = None

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def record(self, entry):
        with LOG_LOCK, open(self.log_file, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(self, status, body, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    @staticmethod
    def pick(tools, want, name, args):
        """How to call tool `name`: directly when offered (and wanted), else
        through Tool Search's `tool_call`; None when neither is possible."""
        if name in tools and want in (None, "exec"):
            return name, name, args
        if "tool_call" in tools and want in (None, "tool_call"):
            return "tool_call", name, args
        return None

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        self.record({"path": self.path, "kind": "get"})
        if path.endswith("/models"):
            self.reply(200, json.dumps({"object": "list", "data": [
                {"id": "fake-model", "object": "model", "owned_by": "fake"}]}).encode())
            return
        self.reply(404, b'{"error":{"message":"fake: not found","type":"not_found"}}')

    def do_HEAD(self):
        self.reply(200, b"")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?", 1)[0]
        if not path.endswith("/chat/completions"):
            self.record({"path": self.path, "kind": "unknown"})
            self.reply(404, b'{"error":{"message":"fake: not found","type":"not_found"}}')
            return
        if os.environ.get("FAKE_DUMP_DIR"):
            with LOG_LOCK:
                n = len(os.listdir(os.environ["FAKE_DUMP_DIR"]))
                with open(os.path.join(os.environ["FAKE_DUMP_DIR"], "%04d.json" % n), "w") as f:
                    json.dump(req, f, indent=1)

        model = req.get("model") or "fake-model"
        messages = [m for m in req.get("messages") or [] if isinstance(m, dict)]
        tools = offered_tools(req)
        system = "\n".join(t for m in messages if m.get("role") in ("system", "developer")
                           for t in texts(m.get("content")))

        # The latest real user message (the one with the marker).
        real, command, want, approve = None, None, None, False
        for i, m in enumerate(messages):
            if m.get("role") == "user":
                for t in texts(m.get("content")):
                    hit = MARKER.search(t)
                    if hit:
                        real, command = i, hit.group(1)
                        via = VIA.search(t)
                        want = via.group(1) if via else None
                        approve = APPROVE in t
        # The tool calls made since, with their results, in order.
        steps, names = [], {}
        if real is not None:
            for m in messages[real + 1:]:
                if m.get("role") == "assistant":
                    for tc in m.get("tool_calls") or []:
                        fn = tc.get("function") or {}
                        names[tc.get("id")] = fn.get("name")
                elif m.get("role") == "tool":
                    steps.append((names.get(m.get("tool_call_id")),
                                  "\n".join(texts(m.get("content")))))

        cid = "chatcmpl-" + uuid.uuid4().hex[:24]
        entry = {"path": self.path, "command": command, "tools": tools,
                 "system_has_probe": SYSTEM_PROBE in system}
        call = None  # (via, tool name, args)
        if command is not None:
            last = steps[-1][1] if steps else ""
            escalation = ESCALATION.search(last)
            if not steps:
                call = self.pick(tools, want, "exec", {"command": command})
            elif approve and escalation and len(steps) == 1:
                call = self.pick(tools, None, "toolgate_approve",
                                 {"id": escalation.group(1), "reason": "the user said yes"})
            elif approve and len(steps) == 2:
                call = self.pick(tools, want, "exec", {"command": command})
        if command is None:
            entry.update(kind="side", via=None)
            chunks = [chunk(model, cid, {"role": "assistant", "content": "ok"}),
                      chunk(model, cid, {}, "stop")]
        elif call is not None:
            via, name, args = call
            entry.update(kind="tool_use", via=via, name=name, step=len(steps) + 1)
            tc = {"index": 0, "id": "call_" + uuid.uuid4().hex[:20], "type": "function",
                  "function": {"name": via, "arguments": json.dumps(
                      args if via == name else {"id": name, "args": args})}}
            chunks = [chunk(model, cid, {"role": "assistant", "content": None,
                                         "tool_calls": [tc]}),
                      chunk(model, cid, {}, "tool_calls")]
        elif steps:
            entry.update(kind="final", via=None, tool_result=steps[-1][1],
                         results=[{"tool": n, "result": r} for n, r in steps])
            chunks = [chunk(model, cid, {"role": "assistant", "content": "FAKE-MODEL-DONE"}),
                      chunk(model, cid, {}, "stop")]
        else:
            entry.update(kind="no_tool", via=None)
            chunks = [chunk(model, cid, {"role": "assistant", "content": "no tool to call"}),
                      chunk(model, cid, {}, "stop")]
        chunks.append({"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                       "model": model, "choices": [],
                       "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}})
        self.record(entry)

        if req.get("stream"):
            self.reply(200, sse(chunks), "text/event-stream")
            return
        # Non-streaming: fold the chunks into one message.
        msg = {"role": "assistant", "content": None}
        finish = "stop"
        for c in chunks:
            for ch in c["choices"]:
                d = ch["delta"]
                if d.get("content"):
                    msg["content"] = d["content"]
                if d.get("tool_calls"):
                    msg["tool_calls"] = [{k: v for k, v in tc.items() if k != "index"}
                                         for tc in d["tool_calls"]]
                finish = ch["finish_reason"] or finish
        body = {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}}
        self.reply(200, json.dumps(body).encode())


def main():
    port_file, log_file = sys.argv[1], sys.argv[2]
    lo = int(sys.argv[3]) if len(sys.argv) > 3 else 21000
    hi = int(sys.argv[4]) if len(sys.argv) > 4 else 21999
    Handler.log_file = log_file
    ports = list(range(lo, hi + 1))
    random.shuffle(ports)
    server = None
    for port in ports:
        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
            break
        except OSError:
            continue
    if server is None:
        sys.exit("fake_openai: no free port in %d-%d" % (lo, hi))
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
