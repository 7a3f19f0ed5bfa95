#!/usr/bin/env python3
"""A scripted Gemini API for Gemini CLI, on 127.0.0.1 (stdlib only).

Usage: fake_gemini.py PORT_FILE SCRIPT_FILE LOG_FILE

SCRIPT_FILE holds a JSON list of steps, each one model answer:
{"name": tool, "args": {...}} for a function call, {"text": "..."} for a
final answer; "wait_for": PATH delays a step until PATH exists (at most
90 s). The step answered is the number of function responses in the
request after its last user text, so one turn plays the calls, then the
text. The router's `generateContent` gets a JSON answer. The script is
re-read on every request.
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, script_file, log_file = sys.argv[1:4]


def responses_after_last_user(contents):
    n = 0
    for c in contents if isinstance(contents, list) else []:
        parts = c.get("parts") or [] if isinstance(c, dict) else []
        if c.get("role") == "user" and any(isinstance(p, dict) and "text" in p for p in parts):
            n = 0
        n += sum(1 for p in parts if isinstance(p, dict) and "functionResponse" in p)
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
            names = [d.get("name") for t in body.get("tools") or [] if isinstance(t, dict)
                     for d in t.get("functionDeclarations") or [] if isinstance(d, dict)]
            log.write(json.dumps({"path": self.path, "tools": names}) + "\n")
        if ":generateContent" in self.path:
            answer = {"candidates": [{"content": {"role": "model", "parts": [
                {"text": json.dumps({"reasoning": "simple", "model_choice": "flash"})}]},
                "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if ":streamGenerateContent" not in self.path:
            self.send_response(404)
            self.end_headers()
            return
        with open(script_file) as f:
            script = json.load(f)
        i = responses_after_last_user(body.get("contents"))
        step = script[i] if i < len(script) else {"text": "done"}
        if "wait_for" in step:
            deadline = time.time() + 90
            while not os.path.exists(step["wait_for"]) and time.time() < deadline:
                time.sleep(0.1)
        if "name" in step:
            part = {"functionCall": {"name": step["name"], "args": step["args"]}}
        else:
            part = {"text": step["text"]}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
                 "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.flush()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
