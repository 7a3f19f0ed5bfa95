#!/usr/bin/env python3
"""A raw JSON-RPC client for run.sh: what goes over the wire, byte for byte.

    raw.py STEPS_JSON -- CMD ARGS...

Starts CMD ARGS with pipes, sends `initialize` (id 0, no client
capabilities, so no elicitation) and `notifications/initialized`, then, per
step {"id": <any JSON-RPC id>, "method": M, "params": P}, sends the request
and reads messages until the response with that id arrives (or
`--timeout` seconds pass). A step {"id": ID, "line": TEXT} sends TEXT as
it is (one line) and takes a response with ID or with id null. Then it
closes the child's stdin and measures how long the child takes to exit.
Prints one JSON document:

    {"init": <response>, "steps": [{"sent": ..., "response": ..., "elapsed_ms": N}],
     "other": [<every message that was not a response we waited for>],
     "exit": {"code": 0, "after_close_ms": 12} | {"code": null, "after_close_ms": null}}

Exit 0 when it ran, 2 when the child could not be started or spoke no JSON.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any


def main() -> int:
    argv = sys.argv[1:]
    timeout = 20.0
    if argv[:1] == ["--timeout"]:
        timeout = float(argv[1])
        argv = argv[2:]
    if "--" not in argv or argv.index("--") != 1:
        print("raw.py: usage: raw.py [--timeout S] STEPS_JSON -- CMD ARGS...", file=sys.stderr)
        return 2
    steps = json.loads(argv[0])
    cmd = argv[2:]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    lines: queue.Queue[bytes | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    other: list[Any] = []

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def same_id(a: Any, b: Any) -> bool:
        # Same id and same JSON type: 7 is not "7".
        return a == b and type(a) is type(b)

    def wait_for(msg_id: Any, or_null: bool = False) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                return None
            try:
                msg = json.loads(line)
            except ValueError:
                other.append({"unparsable": line.decode(errors="replace")})
                continue
            if (
                isinstance(msg, dict)
                and "method" not in msg
                and (same_id(msg.get("id"), msg_id) or (or_null and msg.get("id") is None))
            ):
                return msg
            other.append(msg)

    out: dict[str, Any] = {"steps": [], "other": other}
    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "toolgate-e2e-raw", "version": "1"},
                },
            }
        )
        out["init"] = wait_for(0)
        if out["init"] is None:
            print("raw.py: no answer to initialize", file=sys.stderr)
            proc.kill()
            return 2
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for step in steps:
            t0 = time.monotonic()
            if "line" in step:
                # A literal line, sent as it is; a parse error is answered with id null.
                msg = step["line"]
                assert proc.stdin is not None
                proc.stdin.write(msg.encode() + b"\n")
                proc.stdin.flush()
                response = wait_for(step["id"], or_null=True)
            else:
                msg = {"jsonrpc": "2.0", "id": step["id"], "method": step["method"]}
                if "params" in step:
                    msg["params"] = step["params"]
                send(msg)
                response = wait_for(step["id"])
            out["steps"].append(
                {"sent": msg, "response": response, "elapsed_ms": round((time.monotonic() - t0) * 1000)}
            )
    except BrokenPipeError:
        out["broken_pipe"] = True
    assert proc.stdin is not None
    t0 = time.monotonic()
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        code = proc.wait(timeout=10)
        out["exit"] = {"code": code, "after_close_ms": round((time.monotonic() - t0) * 1000)}
    except subprocess.TimeoutExpired:
        out["exit"] = {"code": None, "after_close_ms": None}
        proc.kill()
        proc.wait()
    # Whatever else came out before the end.
    while True:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            break
        if line is None:
            break
        try:
            other.append(json.loads(line))
        except ValueError:
            other.append({"unparsable": line.decode(errors="replace")})
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
