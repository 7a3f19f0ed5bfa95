#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, enough for one
Claude Code turn (Python 3 standard library only).

    fake_anthropic.py PORT_FILE LOG_FILE [PORT_MIN PORT_MAX]

Listens on 127.0.0.1, on the first free port in [PORT_MIN, PORT_MAX]
(default 20000-20999, tried in random order), and writes the port to
PORT_FILE once it accepts connections.

The script of a turn comes from the prompt: the first user message must hold
`<<<RUN:command>>>`. The first request of the conversation gets a `Bash`
tool_use with that command (streamed as SSE, the way the real API does);
once the request carries the tool_result, the model answers with text and
ends the turn — unless that result holds toolgate's `TOOLGATE_ACK|` (the call
was held until knowledge is read): then, once, the model retries the same
command (with a reworded description, as a real model does) before it ends. Requests without the Bash tool (title generation and other
side calls) get a short text answer.

Every request is appended to LOG_FILE as one JSON line
{"path", "kind", "tool_result"} so a test can say what Claude sent back
(e.g. the hook's denial reason).
"""

import json
import os
import random
import re
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MARKER = re.compile(r"<<<RUN:(.*?)>>>", re.S)
# `<<<TOOL:{"name": "Write", "input": {...}}>>>`: call that tool instead.
TOOL_MARKER = re.compile(r"<<<TOOL:(.*?)>>>", re.S)
LOG_LOCK = threading.Lock()


def texts(content):
    """Every text inside a message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        yield content
        return
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            yield block.get("text", "")
        elif block.get("type") == "tool_result":
            yield from texts(block.get("content"))


def tool_results(message):
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def sse(events):
    out = []
    for ev in events:
        out.append("event: %s\ndata: %s\n\n" % (ev["type"], json.dumps(ev)))
    return "".join(out).encode()


def message_events(model, block, stop_reason):
    msg_id = "msg_" + uuid.uuid4().hex[:24]
    usage = {"input_tokens": 12, "output_tokens": 1,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    events = [{"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}]
    if block["type"] == "tool_use":
        events.append({"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
        events.append({"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
    else:
        events.append({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}})
        events.append({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": block["text"]}})
    events.append({"type": "content_block_stop", "index": 0})
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                   "usage": {"output_tokens": 8}})
    events.append({"type": "message_stop"})
    return msg_id, events


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

    def do_GET(self):
        self.record({"path": self.path, "kind": "get"})
        self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}')

    def do_HEAD(self):
        self.reply(200, b"")

    def messages_request(self):
        """The JSON body of a `POST /v1/messages` (an empty object when it is
        not JSON); None once any other path has been answered."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            self.record({"path": self.path, "kind": "count_tokens"})
            self.reply(200, b'{"input_tokens":12}')
            return None
        if not path.endswith("/v1/messages"):
            self.record({"path": self.path, "kind": "unknown"})
            self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}')
            return None
        return req

    def do_POST(self):
        req = self.messages_request()
        if req is None:
            return

        model = req.get("model") or "claude-fake"
        messages = req.get("messages") or []
        tools = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
        command = None
        tool_name, tool_input = "Bash", None
        for m in messages:
            if m.get("role") == "user":
                for t in texts(m.get("content")):
                    hit = TOOL_MARKER.search(t)
                    if hit:
                        spec = json.loads(hit.group(1))
                        tool_name, tool_input = spec["name"], spec["input"]
                        command = json.dumps(tool_input)
                        break
                    hit = MARKER.search(t)
                    if hit:
                        command = hit.group(1)
                        break
            if command is not None:
                break
        # Tool results anywhere after the model's first tool call (Claude may
        # put a denied call's result next to other blocks, or in a later
        # message): one tool call per conversation, never a loop.
        results, called, calls = [], False, 0
        for m in messages:
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                n = sum(1 for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use")
                calls += n
                called = called or n > 0
            elif called and m.get("role") == "user":
                results.extend(tool_results(m))
        held = bool(results) and "TOOLGATE_ACK|" in "\n".join(texts([results[-1]]))
        if os.environ.get("FAKE_DUMP_DIR"):
            with LOG_LOCK:
                n = len(os.listdir(os.environ["FAKE_DUMP_DIR"]))
                with open(os.path.join(os.environ["FAKE_DUMP_DIR"], "%04d.json" % n), "w") as f:
                    json.dump(req, f, indent=1)

        if command is None or tool_name not in tools:
            kind, stop = "side", "end_turn"
            block = {"type": "text", "text": "ok"}
            result_text = None
        elif not called:
            kind, stop = "tool_use", "tool_use"
            block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": tool_name,
                     "input": tool_input if tool_input is not None else
                     {"command": command, "description": "Run the requested command"}}
            result_text = None
        elif held and calls < 2:
            kind, stop = "retry", "tool_use"
            block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": "Bash",
                     "input": {"command": command,
                               "description": "Run it again, having read the procedure"}}
            result_text = "\n".join(texts([results[-1]]))
        else:
            kind, stop = "final", "end_turn"
            result_text = "\n".join(texts([results[-1]])) if results else ""
            block = {"type": "text", "text": "FAKE-MODEL-DONE"}
        self.record({"path": self.path, "kind": kind, "command": command,
                     "tool_result": result_text,
                     "is_error": results[-1].get("is_error") if results else None})

        msg_id, events = message_events(model, block, stop)
        if req.get("stream"):
            self.reply(200, sse(events), "text/event-stream")
        else:
            content = [dict(block)]
            body = {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                    "content": content, "stop_reason": stop, "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 8}}
            self.reply(200, json.dumps(body).encode())


def serve(handler, port_file, lo, hi, name):
    """Serves `handler` on the first free loopback port in [lo, hi] (tried
    in random order), written to `port_file` once it accepts connections."""
    ports = list(range(lo, hi + 1))
    random.shuffle(ports)
    server = None
    for port in ports:
        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), handler)
            break
        except OSError:
            continue
    if server is None:
        sys.exit("%s: no free port in %d-%d" % (name, lo, hi))
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


def main():
    port_file, log_file = sys.argv[1], sys.argv[2]
    lo = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    hi = int(sys.argv[4]) if len(sys.argv) > 4 else 20999
    Handler.log_file = log_file
    serve(Handler, port_file, lo, hi, "fake_anthropic")


if __name__ == "__main__":
    main()
