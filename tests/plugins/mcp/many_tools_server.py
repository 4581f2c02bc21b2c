"""An MCP server with thousands of tools, written with the ``mcp`` SDK's low-level server API.

Run ``python many_tools_server.py COUNT`` (stdio). Tool ``i`` is named
``<verb>_<noun>_<i>`` and answers ``<name> ran with <args>``; one tool,
``forecast_weather``, has words no other tool has, so a search can find it.
The low-level API keeps start-up fast: the SDK's decorated tools build a
model per tool, which takes seconds for thousands.
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

VERBS = ("create", "list", "delete", "update", "get", "archive", "merge", "close")
NOUNS = ("issue", "file", "branch", "commit", "user", "invoice", "ticket", "channel", "page", "alert")
SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Which item to act on."},
        "note": {"type": "string", "description": "A note stored with the change."},
    },
    "required": ["id"],
}


def catalogue(count: int) -> list[Tool]:
    tools = [
        Tool(name="forecast_weather", description="Forecast tomorrow's weather for a city.",
             input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    ]  # fmt: skip
    for i in range(count - 1):
        verb, noun = VERBS[i % len(VERBS)], NOUNS[(i // len(VERBS)) % len(NOUNS)]
        tools.append(Tool(name=f"{verb}_{noun}_{i}", description=f"{verb.title()} one {noun} in project {i}.",
                          input_schema=SCHEMA))  # fmt: skip
    return tools


def main(count: int) -> None:
    tools = catalogue(count)
    names = {t.name for t in tools}

    async def list_tools(ctx: object, params: object) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: object, params: object) -> CallToolResult:
        name, args = params.name, params.arguments or {}  # type: ignore[attr-defined]
        if name not in names:
            return CallToolResult(content=[TextContent(type="text", text=f"no tool {name}")], is_error=True)
        return CallToolResult(content=[TextContent(type="text", text=f"{name} ran with {json.dumps(args, sort_keys=True)}")])

    server = Server("many", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(int(sys.argv[1]))
