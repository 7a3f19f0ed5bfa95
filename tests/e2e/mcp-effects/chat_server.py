#!/usr/bin/env python3
"""A fake Slack-like chat MCP server for run.sh (stdio): posts to channels
and direct messages, nothing really sent; every call is logged (--log)."""

from __future__ import annotations

from typing import Any

from fakeserver import LoggingServer, options

args = options()
server = LoggingServer("fake-chat", args.log)
CHANNELS = [
    {"id": "#general", "name": "general", "is_private": False},
    {"id": "#dev-team", "name": "dev-team", "is_private": True},
]


@server.tool()
def slack_post_message(channel_id: str, text: str) -> dict[str, Any]:
    """Post a message to a channel of the workspace."""
    return {"ok": True, "fake": "chat", "channel": channel_id, "ts": "1700000000.000100", "text": text}


@server.tool()
def slack_list_channels() -> dict[str, Any]:
    """List the workspace's channels."""
    return {"ok": True, "fake": "chat", "channels": CHANNELS}


@server.tool()
def send_direct_message(user_email: str, text: str) -> dict[str, Any]:
    """Send a direct message to a person, by email address."""
    return {"ok": True, "fake": "chat", "to": user_email, "ts": "1700000000.000200", "text": text}


if __name__ == "__main__":
    server.run("stdio")
