"""MCP servers as a tool source, on the official ``mcp`` SDK (installed with ``hermes-kernel[mcp]``).

The ``mcp`` entry point in ``hermes.tools`` names :func:`toolset`; the SDK is
imported only when a configured server starts, so the plugin costs nothing
when ``mcp.servers`` is empty.
"""

from __future__ import annotations

from .source import McpToolSource

__all__ = ["McpToolSource", "toolset"]


def toolset() -> McpToolSource:
    """The ``mcp`` toolset: the tools of every server in ``mcp.servers``."""
    return McpToolSource()
