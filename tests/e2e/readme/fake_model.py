#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API for the README test: a
"model" that makes one Bash call, waits for a person's approval when toolgate
holds it, retries exactly the same call, and then tries it once more (Python
3 standard library only).

    fake_model.py PORT_FILE LOG_FILE GO_FILE [GO_TIMEOUT_S]

Listens on a free loopback port (written to PORT_FILE once it accepts
connections). The first user message must hold `<<<RUN:command>>>`. Per
conversation, counting the Bash calls the model has made so far:

  0  call    the Bash call {command, description}
  1  held    toolgate held it (its result holds `TOOLGATE_ESCALATE|`): the
             answer waits until GO_FILE exists (the test creates it once the
             person approved in the UI, or gave up), then:
     retry   exactly the same call again (same input: the approval is bound
             to it). Without GO_FILE after GO_TIMEOUT_S (default 300):
             a text answer and the end of the turn.
  2  again   the same call a third time: an approval lets a call run once,
             so toolgate must hold this one again
  3  final   a text answer; the turn ends

If the first call was not held, the model answers with text at once. Requests
without the Bash tool (title generation and other side calls) get a short
text answer. Every request is appended to LOG_FILE as one JSON line
{"kind", "tool_result"}, where tool_result is what Claude sent back for the
model's latest call (the hook's reason on a denial, the command's output
when it ran); `held` is logged before the wait starts.

Claude Code only calls `POST /v1/messages` with "stream": true and reads SSE
(message_start, content_block_start/delta/stop, message_delta, message_stop).
"""

import json
import os
import re
import sys
import time
import uuid

# The Messages API's streaming and the request plumbing are the Claude Code
# e2e fake's; only the script of the turn is this test's own.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "claude-code"))
import fake_anthropic  # noqa: E402
from fake_anthropic import texts  # noqa: E402

MARKER = re.compile(r"<<<RUN:(.*?)>>>", re.S)
DESCRIPTION = "Push main to origin"


def sse(model, block, stop_reason):
    return fake_anthropic.sse(fake_anthropic.message_events(model, block, stop_reason)[1])


class Handler(fake_anthropic.Handler):
    """The Claude Code fake's plumbing (reading requests, record, reply), with
    this script."""
    go_file = None
    go_timeout = 300.0

    def do_POST(self):
        req = self.messages_request()
        if req is None:
            return

        model = req.get("model") or "claude-fake"
        messages = req.get("messages") or []
        tools = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
        command = None
        for m in messages:
            if m.get("role") == "user":
                for t in texts(m.get("content")):
                    hit = MARKER.search(t)
                    if hit:
                        command = hit.group(1)
                        break
            if command is not None:
                break
        calls, results = 0, []
        for m in messages:
            content = m.get("content")
            if not isinstance(content, list):
                continue
            if m.get("role") == "assistant":
                calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
            elif calls and m.get("role") == "user":
                results.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        last = "\n".join(texts([results[-1]])) if results else None

        call = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": "Bash",
                "input": {"command": command, "description": DESCRIPTION}}
        if command is None or "Bash" not in tools:
            kind, block = "side", {"type": "text", "text": "ok"}
        elif calls == 0:
            kind, block = "call", call
        elif calls == 1 and last is not None and "TOOLGATE_ESCALATE|" in last:
            self.record({"kind": "held", "tool_result": last})
            deadline = time.monotonic() + self.go_timeout
            while not os.path.exists(self.go_file) and time.monotonic() < deadline:
                time.sleep(0.1)
            if os.path.exists(self.go_file):
                kind, block = "retry", call
            else:
                kind, block = "gave-up", {"type": "text", "text": "FAKE-MODEL: nobody approved"}
        elif calls == 1:
            kind, block = "not-held", {"type": "text", "text": "FAKE-MODEL-DONE"}
        elif calls == 2:
            kind, block = "again", call
        else:
            kind, block = "final", {"type": "text", "text": "FAKE-MODEL-DONE"}
        if kind != "held":
            self.record({"kind": kind, "tool_result": last})
        stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
        self.reply(200, sse(model, block, stop), "text/event-stream")


def main():
    port_file, log_file, go_file = sys.argv[1:4]
    Handler.log_file = log_file
    Handler.go_file = go_file
    if len(sys.argv) > 4:
        Handler.go_timeout = float(sys.argv[4])
    fake_anthropic.serve(Handler, port_file, 24000, 24999, "fake_model")


if __name__ == "__main__":
    main()
