"""``hermes usage [ID]``: tokens by bucket, cost with its status, API calls, compressions."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._state import print_json, print_table
from .sessions import _require_store, open_store

__all__ = ["usage"]


def usage(
    ctx: typer.Context,
    session_id: Annotated[Optional[str], typer.Argument(help="Session id (or unique prefix); all sessions when omitted.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show token usage, cost and API calls for one session or all of them."""
    from ..store import SessionUsage
    from ..usage import CanonicalUsage

    if session_id is not None:
        with _require_store(ctx, session_id) as store:
            result = store.usage(store.resolve_session_id(session_id))
    else:
        store = open_store(ctx)
        if store is None:
            result = SessionUsage(None, CanonicalUsage(), 0, 0, 0, 0.0, None)
        else:
            with store:
                result = store.usage()
    data = result.as_dict()
    if as_json:
        print_json(data)
        return
    tokens = data["tokens"]
    print_table(
        ["bucket", "tokens"],
        [[name.replace("_tokens", "").replace("_", " "), f"{tokens[name]:,}"]
         for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "total_tokens")],
        title=f"session {session_id}" if session_id else f"all sessions ({data['sessions']})",
    )  # fmt: skip
    status = data["cost_status"]
    if status is None:
        cost = "$0.00 (no API calls)"
    elif status == "unknown":
        cost = f"unknown (at least ${data['known_cost_usd']:.4f}; some calls had no known price)"
    else:
        cost = f"${data['cost_usd']:.4f} ({status})"
    typer.echo(f"cost: {cost}")
    typer.echo(f"API calls: {data['api_calls']}  compressions: {data['compressions']}")
