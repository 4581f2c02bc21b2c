"""Deferred tool loading: request tokens with 1,000 MCP tools, deferred against all schemas sent.

A real stdio server (written with the SDK's low-level API, so listing 1,000
tools is quick) joins a kernel ToolRegistry through the MCP toolset, as in a
chat. The same request (a system prompt and one user message) is estimated
with every schema in it, with the schemas deferred behind ``tool_search``, and
after one search loaded a tool. Part of ``python -m bench mcp``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["SERVER", "measure"]

SERVER = '''
import sys
import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

VERBS = ("create", "list", "delete", "update", "get", "archive", "merge", "close")
NOUNS = ("issue", "file", "branch", "commit", "user", "invoice", "ticket", "channel", "page", "alert")
SCHEMA = {"type": "object", "required": ["id"], "properties": {
    "id": {"type": "string", "description": "Which item to act on."},
    "note": {"type": "string", "description": "A note stored with the change."}}}
TOOLS = [Tool(name=f"{VERBS[i % 8]}_{NOUNS[(i // 8) % 10]}_{i}", input_schema=SCHEMA,
              description=f"{VERBS[i % 8].title()} one {NOUNS[(i // 8) % 10]} in project {i}.")
         for i in range(int(sys.argv[1]))]


async def list_tools(ctx, params):
    return ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    return CallToolResult(content=[TextContent(type="text", text=params.name)])


async def serve():
    server = Server("many", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(serve)
'''

_MESSAGES = [
    {"role": "system", "content": "You are a helpful agent. " * 40},
    {"role": "user", "content": "Close the invoice of project 17 and tell me when it is done."},
]


def measure(count: int = 1000, max_tools: int = 128) -> dict[str, Any]:
    """Request tokens with ``count`` tools: all schemas, deferred, and deferred after one search."""
    from hermes.kernel import Config, HermesHome, ToolContext, estimate_tokens
    from hermes.kernel.tool_registry import ToolCall, ToolRegistry
    from hermes.plugins.mcp import toolset

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "many_tools.py"
        script.write_text(SERVER, encoding="utf-8")
        config = Config({"mcp": {"servers": {"many": {"command": sys.executable, "args": [str(script), str(count)]}},
                                 "connect_timeout": 120}})  # fmt: skip
        source = toolset()
        source.configure(config, HermesHome(root=Path(tmp), profile="default"))
        registry = ToolRegistry()
        registry.add_source(source)
        try:
            started = time.perf_counter()
            every = registry.schemas()
            listed = time.perf_counter() - started
            started = time.perf_counter()
            deferred = registry.offer(config, context_length=200_000, max_tools=max_tools, record=True)
            planned = time.perf_counter() - started
            search = registry.dispatch(ToolCall("s", "tool_search", '{"query": "close invoice 17"}'), ToolContext())
            loaded = registry.offer(config, context_length=200_000, max_tools=max_tools, record=True)
        finally:
            source.close()
    all_tokens = estimate_tokens(_MESSAGES, every)
    deferred_tokens = estimate_tokens(_MESSAGES, deferred)
    loaded_tokens = estimate_tokens(_MESSAGES, loaded)
    return {
        "tools": len(every),
        "request_tokens_all_schemas": all_tokens,
        "request_tokens_deferred": deferred_tokens,
        "request_tokens_after_search": loaded_tokens,
        "tools_offered_deferred": len(deferred),
        "tools_offered_after_search": len(loaded),
        "ratio_deferred": round(deferred_tokens / all_tokens, 4),
        "ratio_after_search": round(loaded_tokens / all_tokens, 4),
        "search_found": search.content.splitlines()[1:2],
        "list_seconds": round(listed, 3),
        "plan_ms": round(planned * 1000, 2),
    }


def report(result: dict[str, Any]) -> None:
    print(f"deferred tool loading ({result['tools']} MCP tools; request tokens, estimated)")
    print(f"  all schemas sent        {result['request_tokens_all_schemas']:7d} tokens")
    print(f"  deferred (tool_search)  {result['request_tokens_deferred']:7d} tokens  "
          f"({result['tools_offered_deferred']} tools, ratio {result['ratio_deferred']:.4f})")  # fmt: skip
    print(f"  after one search        {result['request_tokens_after_search']:7d} tokens  "
          f"({result['tools_offered_after_search']} tools, ratio {result['ratio_after_search']:.4f})")  # fmt: skip
    print(f"  planning one request    {result['plan_ms']:7.2f} ms")
