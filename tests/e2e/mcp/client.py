#!/usr/bin/env python3
"""A scripted MCP client for run.sh, on the real Python SDK.

    client.py [--elicit MODE] [--call-timeout S] STEPS_JSON -- CMD ARGS...

Launches CMD ARGS over stdio with the SDK's `stdio_client`, opens a
`ClientSession`, runs the `initialize` handshake and then the steps, and
prints one JSON document on stdout:

    {"server": {...}, "protocol": "...", "capabilities_sent": {...},
     "steps": [{"op": ..., "ok": true, "elapsed_ms": 12, "result": {...}} |
               {"op": ..., "ok": false, "elapsed_ms": 12, "error": "..."}],
     "elicitations": [{"message": "...", "requestedSchema": {...}, "answer": "accept"}]}

STEPS_JSON is a list of
    {"op": "list_tools"}
    {"op": "call", "tool": NAME, "args": {...}}
    {"op": "parallel", "steps": [...]}   (started 50 ms apart, run concurrently;
                                          result {"steps": [records]})
    {"op": "signal", "path": P}          (creates the file P)
    {"op": "wait_file", "path": P, "timeout": S}   (waits until P exists)

--elicit none (default) declares no elicitation capability; decline, cancel
and accept declare it and answer every `elicitation/create` that way (accept
answers {"approve": true}). A step that raises is recorded with ok=false and
the run goes on. Exit 0 when the session could be set up, 2 when not.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any

import anyio

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def dump(model: Any) -> Any:
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return model


async def run(args: argparse.Namespace) -> dict[str, Any]:
    steps = json.loads(args.steps)
    out: dict[str, Any] = {"steps": [], "elicitations": []}

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        record = dump(params)
        record["answer"] = args.elicit
        record["at_ms"] = round((time.monotonic() - started) * 1000)
        out["elicitations"].append(record)
        if args.elicit == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action=args.elicit)

    callback = None if args.elicit == "none" else on_elicit
    # The whole environment, not the SDK's default subset: run.sh sets HOME and
    # TOOLGATE_* for the proxy this way.
    params = StdioServerParameters(command=args.cmd[0], args=args.cmd[1:], env=dict(os.environ))
    started = time.monotonic()
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            init = await session.initialize()
            out["server"] = dump(init.server_info)
            out["protocol"] = init.protocol_version
            out["capabilities_sent"] = dump(session._build_capabilities(init.protocol_version))

            async def run_step(step: dict[str, Any]) -> dict[str, Any]:
                t0 = time.monotonic()
                record: dict[str, Any] = {"op": step["op"]}
                if "tool" in step:
                    record["tool"] = step["tool"]
                try:
                    if step["op"] == "list_tools":
                        result = await session.list_tools()
                    elif step["op"] == "call":
                        result = await session.call_tool(
                            step["tool"], step.get("args") or {}, read_timeout_seconds=args.call_timeout
                        )
                    elif step["op"] == "parallel":
                        subs: list[dict[str, Any]] = [{} for _ in step["steps"]]

                        async def one(i: int, sub: dict[str, Any]) -> None:
                            subs[i] = await run_step(sub)

                        async with anyio.create_task_group() as tg:
                            for i, sub in enumerate(step["steps"]):
                                tg.start_soon(one, i, sub)
                                # Keep the order on the wire: the first step is sent first.
                                await anyio.sleep(0.05)
                        result = {"steps": subs}
                    elif step["op"] == "signal":
                        with open(step["path"], "w") as f:
                            f.write("1\n")
                        result = {}
                    elif step["op"] == "wait_file":
                        with anyio.fail_after(step.get("timeout", 30)):
                            while not os.path.exists(step["path"]):
                                await anyio.sleep(0.05)
                        result = {}
                    else:
                        raise ValueError(f"unknown op {step['op']!r}")
                    record["ok"] = True
                    record["result"] = dump(result)
                except Exception as e:  # recorded for run.sh to judge
                    record["ok"] = False
                    record["error"] = f"{type(e).__name__}: {e}"
                record["elapsed_ms"] = round((time.monotonic() - t0) * 1000)
                return record

            for step in steps:
                out["steps"].append(await run_step(step))
    return out


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print("client.py: usage: client.py [--elicit MODE] STEPS_JSON -- CMD ARGS...", file=sys.stderr)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="client.py")
    parser.add_argument("--elicit", choices=["none", "accept", "decline", "cancel"], default="none")
    parser.add_argument("--call-timeout", type=float, default=25.0)
    parser.add_argument("steps")
    args = parser.parse_args(argv[:split])
    args.cmd = argv[split + 1 :]
    if not args.cmd:
        print("client.py: no server command after --", file=sys.stderr)
        return 2
    try:
        out = anyio.run(run, args)
    except BaseException as e:  # noqa: BLE001 - report any setup failure as one line
        print(f"client.py: session failed: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
