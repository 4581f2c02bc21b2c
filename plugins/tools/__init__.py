"""The built-in tools, one module per toolset.

Each module exports ``TOOLS``, the list its ``hermes.tools`` entry point
names (``files``, ``terminal``, ``todo``, ``clarify``), so the built-ins load
exactly as a third-party toolset would.
"""
