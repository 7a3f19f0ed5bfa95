#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API that plays a *script of
several tool calls* per Claude Code session (Python 3 standard library only).

    fake_model.py PORT_FILE LOG_FILE [PORT_MIN PORT_MAX]

Listens on 127.0.0.1, on the first free port in [PORT_MIN, PORT_MAX] (tried
in random order), and writes the port to PORT_FILE once it accepts
connections.

The session's script is named in the prompt: the first user message holds
`<<<SCRIPT:/absolute/path/steps.json>>>`, a JSON file

    {"steps": [{"name": "Bash", "input": {"command": "…"},
                "capture": {"VAR": "regex with one group"}}, …]}

The model calls the steps' tools one after the other, one per answer, whatever
each result was (a denied call does not stop the script: the next step is an
attacker's next try), then ends the turn. `capture` takes group 1 of the regex
from that step's tool result, when the call ran (not from a denial); later steps' string values have `{{VAR}}`
replaced by it (by nothing when nothing matched), so a step can use what an
earlier one printed (a token read from a file).

Which step comes next is the number of tool calls the conversation already
holds, so a request retried by the client gets the same answer. Requests that
offer no tools (title generation and other side calls) get a short text.

Every request is logged to LOG_FILE as one JSON line:
{"script", "kind": "step"|"final"|"side", "step": N, "issued": {name, input},
 "results": [{"step", "text", "is_error"}…]} — the results Claude sent back for
every earlier step, so the test can say what happened at each step.
"""

import json
import os
import re
import sys
import uuid

# The Messages API's stream format and the server loop are the Claude Code
# suite's (tests/e2e/claude-code/fake_anthropic.py); only the script is ours.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "claude-code"))
from fake_anthropic import Handler as MessagesHandler, message_events, serve, sse  # noqa: E402

SCRIPT_MARKER = re.compile(r"<<<SCRIPT:(.*?)>>>", re.S)


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


def find_script(messages):
    for m in messages:
        if m.get("role") != "user":
            continue
        for t in texts(m.get("content")):
            hit = SCRIPT_MARKER.search(t)
            if hit:
                return hit.group(1).strip()
    return None


def tool_history(messages):
    """(ids of the tool calls in order, {tool_use_id: (text, is_error)})."""
    ids, results = [], {}
    for m in messages:
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            if m.get("role") == "assistant" and b.get("type") == "tool_use":
                ids.append(b.get("id"))
            elif m.get("role") == "user" and b.get("type") == "tool_result":
                results[b.get("tool_use_id")] = ("\n".join(texts([b])), bool(b.get("is_error")))
    return ids, results


def substitute(value, env):
    if isinstance(value, str):
        return re.sub(r"\{\{([A-Z0-9_]+)\}\}", lambda m: env.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [substitute(v, env) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, env) for k, v in value.items()}
    return value


class Handler(MessagesHandler):
    """The Claude suite's handler (quiet log, `record`, `reply`, HEAD), with
    GETs left out of the log and POSTs played from the session's script."""

    def do_GET(self):
        self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}')

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            self.reply(200, b'{"input_tokens":12}')
            return
        if not path.endswith("/v1/messages"):
            self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}')
            return

        model = req.get("model") or "claude-fake"
        messages = req.get("messages") or []
        tools = {t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)}
        script_path = find_script(messages)
        steps = []
        if script_path:
            try:
                with open(script_path, encoding="utf-8") as f:
                    steps = json.load(f)["steps"]
            except (OSError, ValueError, KeyError) as e:
                self.record({"script": script_path, "kind": "error", "error": str(e)})
        ids, by_id = tool_history(messages)
        results = []
        env = {}
        for i, tid in enumerate(ids):
            text, is_error = by_id.get(tid, ("", None))
            results.append({"step": i, "text": text, "is_error": is_error})
            # Only a call that ran can have printed a value (a denial's text
            # may quote the call's own words).
            if i < len(steps) and is_error is False:
                for var, rx in (steps[i].get("capture") or {}).items():
                    hit = re.search(rx, text, re.S)
                    if hit:
                        env[var] = hit.group(1)
        n = len(ids)
        if not steps or not tools:
            kind, stop, block, issued = "side", "end_turn", {"type": "text", "text": "ok"}, None
        elif n < len(steps):
            step = steps[n]
            issued = {"name": step["name"], "input": substitute(step["input"], env)}
            if issued["name"] not in tools:
                # Claude did not offer the tool: say so in the log, end the turn.
                kind, stop = "missing-tool", "end_turn"
                block = {"type": "text", "text": "FAKE-MODEL-NO-TOOL " + issued["name"]}
            else:
                kind, stop = "step", "tool_use"
                block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24],
                         "name": issued["name"], "input": issued["input"]}
        else:
            kind, stop, block, issued = "final", "end_turn", {"type": "text", "text": "FAKE-MODEL-DONE"}, None
        self.record({"script": script_path, "kind": kind, "step": n, "issued": issued,
                     "results": results})

        msg_id, events = message_events(model, block, stop)
        if req.get("stream"):
            self.reply(200, sse(events), "text/event-stream")
        else:
            body = {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                    "content": [dict(block)], "stop_reason": stop, "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 8}}
            self.reply(200, json.dumps(body).encode())


def main():
    port_file, log_file = sys.argv[1], sys.argv[2]
    lo = int(sys.argv[3]) if len(sys.argv) > 3 else 23000
    hi = int(sys.argv[4]) if len(sys.argv) > 4 else 23999
    Handler.log_file = log_file
    serve(Handler, port_file, lo, hi, "fake_model")


if __name__ == "__main__":
    main()
