#!/usr/bin/env python3
"""A fake Stripe-like payments MCP server for run.sh (stdio). --mode says
which account it stands for (live or test), as the secret key a real
server is started with does; a call's `livemode` argument is accepted and
changes nothing, as it would not at Stripe, so an agent cannot turn a live
refund into a test one by adding it. No money moves; every call is logged
(--log)."""

from __future__ import annotations

from typing import Any

from fakeserver import LoggingServer, options

args = options()
server = LoggingServer("fake-payments", args.log, args.mode)


@server.tool()
def create_refund(
    payment_intent: str, amount: int, reason: str | None = None, livemode: bool | None = None
) -> dict[str, Any]:
    """Refund (part of) a payment: `amount` in the smallest currency unit."""
    live = args.mode == "live"
    return {
        "fake": "payments",
        "id": "re_fake_0001",
        "object": "refund",
        "payment_intent": payment_intent,
        "amount": amount,
        "reason": reason,
        "livemode": live,
        "status": "succeeded",
    }


@server.tool()
def list_charges(limit: int = 10) -> dict[str, Any]:
    """List the most recent charges."""
    charges = [
        {"id": f"ch_fake_{i:04d}", "amount": 1000 * (i + 1), "livemode": args.mode == "live"}
        for i in range(min(limit, 3))
    ]
    return {"fake": "payments", "object": "list", "data": charges, "has_more": limit < 3}


if __name__ == "__main__":
    server.run("stdio")
