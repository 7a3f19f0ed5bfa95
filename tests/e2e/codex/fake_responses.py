#!/usr/bin/env python3
"""A scripted OpenAI Responses API for Codex CLI, on 127.0.0.1 (stdlib only).

Usage: fake_responses.py PORT_FILE SCRIPT_FILE LOG_FILE

SCRIPT_FILE holds a JSON list of steps; each step is one model answer: an
object {"name": tool, "arguments": {...}} for a function call, or
{"custom": tool, "input": "..."} for a custom tool call (apply_patch), or
{"text": "..."} for a final answer; a step with "wait_for": PATH is
answered only once PATH exists (at most 90 s), so a suite can act (approve)
between two calls of one session. The step answered is the number of tool
results in the request after its last user message, so one scripted turn
plays out as calls, then the final text. The script file is re-read on
every request, so a suite can change it between runs.
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, script_file, log_file = sys.argv[1:4]


def steps():
    with open(script_file) as f:
        return json.load(f)


def results_after_last_user(items):
    n = 0
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message" and item.get("role") == "user":
            n = 0
        elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
            n += 1
    return n


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with open(log_file, "a") as log:
            log.write(json.dumps({"path": self.path, "tools": [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]}) + "\n")
        if not self.path.startswith("/v1/responses"):
            self.send_response(404)
            self.end_headers()
            return
        script = steps()
        i = results_after_last_user(body.get("input"))
        step = script[i] if i < len(script) else {"text": "done"}
        if "wait_for" in step:
            deadline = time.time() + 90
            while not os.path.exists(step["wait_for"]) and time.time() < deadline:
                time.sleep(0.1)
        if "name" in step:
            item = {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}",
                    "name": step["name"], "arguments": json.dumps(step["arguments"])}
            if "namespace" in step:
                item["namespace"] = step["namespace"]
        elif "custom" in step:
            item = {"type": "custom_tool_call", "id": f"ct_{i}", "call_id": f"call_{i}",
                    "name": step["custom"], "input": step["input"]}
        else:
            item = {"type": "message", "id": f"msg_{i}", "role": "assistant",
                    "content": [{"type": "output_text", "text": step["text"]}]}
        events = [
            {"type": "response.created", "response": {"id": f"resp_{i}"}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": f"resp_{i}", "usage": {
                "input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
                "output_tokens_details": None, "total_tokens": 2}}},
        ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for e in events:
            self.wfile.write(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode())
        self.wfile.flush()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
