"""A low-level SDK server for the offer tests: ``tools/list`` in pages, no resources, clashing names.

Run ``python paged_server.py`` (stdio). ``PAGED_TOOLS`` (default 25) tools named
``tool_00``... are listed ``PAGED_PAGE`` (default 10) at a time; two more,
``dup.name`` and ``dup_name``, sanitise to the same name. The server declares
the resources capability but lists none, as the SDK's high-level servers do.
``PAGED_MARK_DIR`` (optional) receives a ``listed-<cursor>`` file per page served.
Calling a tool returns ``<name> ran``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

_COUNT = int(os.environ.get("PAGED_TOOLS", "25"))
_PAGE = int(os.environ.get("PAGED_PAGE", "10"))
_MARKS = Path(os.environ["PAGED_MARK_DIR"]) if os.environ.get("PAGED_MARK_DIR") else None
_NAMES = [f"tool_{i:02d}" for i in range(_COUNT)] + ["dup.name", "dup_name"]
_SCHEMA = {"type": "object", "properties": {}}


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    if _MARKS is not None:
        _MARKS.mkdir(parents=True, exist_ok=True)
        (_MARKS / f"listed-{start}").write_text("")
    page = [types.Tool(name=n, description=f"the tool {n}", input_schema=_SCHEMA) for n in _NAMES[start : start + _PAGE]]
    after = start + _PAGE
    return types.ListToolsResult(tools=page, next_cursor=str(after) if after < len(_NAMES) else None)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} ran")])


async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[])


server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
