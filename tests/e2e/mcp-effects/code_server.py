#!/usr/bin/env python3
"""A fake GitHub-like code-hosting MCP server for run.sh (stdio): issues,
pull requests and collaborators, nothing really created; every call is
logged (--log)."""

from __future__ import annotations

from typing import Any

from fakeserver import LoggingServer, options

args = options()
server = LoggingServer("fake-code", args.log)


@server.tool()
def create_issue(owner: str, repo: str, title: str, body: str) -> dict[str, Any]:
    """Open an issue in owner/repo."""
    return {"fake": "code", "number": 101, "html_url": f"https://code.example/{owner}/{repo}/issues/101", "title": title}


@server.tool()
def create_pull_request(owner: str, repo: str, title: str, head: str, base: str) -> dict[str, Any]:
    """Open a pull request in owner/repo merging head into base."""
    return {
        "fake": "code",
        "number": 102,
        "html_url": f"https://code.example/{owner}/{repo}/pull/102",
        "head": head,
        "base": base,
        "title": title,
    }


@server.tool()
def add_collaborator(owner: str, repo: str, username: str, permission: str) -> dict[str, Any]:
    """Give a user access to owner/repo (pull, triage, push, maintain, admin)."""
    return {"fake": "code", "invited": username, "repository": f"{owner}/{repo}", "permission": permission}


@server.tool()
def list_issues(owner: str, repo: str) -> dict[str, Any]:
    """List the open issues of owner/repo."""
    return {"fake": "code", "repository": f"{owner}/{repo}", "issues": [{"number": 7, "title": "flaky test"}]}


if __name__ == "__main__":
    server.run("stdio")
