"""What the fake MCP servers of run.sh share: an MCPServer (the Python SDK's
FastMCP, renamed in mcp 2) that appends every `tools/call` it receives to a
log before running it, so run.sh can tell which calls really reached the
server (a held or blocked call must not).

    python3 SERVER.py --log FILE [--mode live|test]

Each log line is {"tool": NAME, "arguments": {...}, "server": ..., "mode": ...}.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True, help="where every tools/call received is appended (JSONL)")
    parser.add_argument("--mode", choices=["live", "test"], default="live", help="payments: the account's mode")
    return parser.parse_args()


class LoggingServer(MCPServer):
    """An MCPServer that logs each tools/call before dispatching it."""

    def __init__(self, name: str, log: str, mode: str = "live") -> None:
        super().__init__(name, version="0.0.1")
        self.log = log
        self.mode = mode

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        record = {"tool": name, "arguments": arguments, "server": self.name, "mode": self.mode, "pid": os.getpid()}
        with open(self.log, "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
        return await super().call_tool(name, arguments, context)
