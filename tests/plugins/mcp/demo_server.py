"""An MCP server for the tests, written with the ``mcp`` SDK's server API.

Run ``python demo_server.py stdio``, or ``python demo_server.py http|sse PORT_FILE``
(Streamable HTTP or the older HTTP+SSE on 127.0.0.1, port chosen by the OS and
written to PORT_FILE).
``DEMO_MARK_DIR`` (optional) receives marker files: ``pid-<pid>`` at start and
``cancelled-<tag>`` when a ``slow`` call is cancelled by the client.
"""

from __future__ import annotations

import base64
import os
import socket
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as ServerToolError
from mcp.types import SamplingMessage, TextContent

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("demo", instructions="A demo server for hermes tests.")
_marks = Path(os.environ["DEMO_MARK_DIR"]) if os.environ.get("DEMO_MARK_DIR") else None


def _mark(name: str, text: str = "") -> None:
    if _marks is not None:
        _marks.mkdir(parents=True, exist_ok=True)
        (_marks / name).write_text(text)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> dict[str, int]:
    """Add two integers; the answer comes back as structured content."""
    return {"sum": a + b}


@server.tool()
async def slow(seconds: float, tag: str = "slow") -> str:
    """Sleep, then answer; records markers when it starts and when the client cancels it."""
    _mark(f"started-{tag}")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _mark(f"cancelled-{tag}")
        raise
    return f"slept {seconds}s"


@server.tool()
def fail(message: str) -> str:
    """Always raises, with the message given."""
    raise ServerToolError(message)


@server.tool()
def image() -> Image:
    """A tiny PNG image."""
    return Image(data=PNG, format="png")


@server.tool()
def crash() -> str:
    """Kill the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def env(name: str) -> str:
    """Whether an environment variable is set in the server process."""
    return f"{name} is {'set to ' + os.environ[name] if name in os.environ else 'not set'}"


@server.tool()
def leak() -> str:
    """Return text holding a secret-looking key (redaction must hide it)."""
    return "the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD and more text"


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling) and return its answer."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=50
    )
    content = result.content
    return f"model said: {content.text if isinstance(content, TextContent) else content}"


def shout(text: str) -> str:
    """Return the text in capitals (offered only after ``grow`` ran)."""
    return text.upper()


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the ``shout`` tool and tell the client its tool list changed."""
    if "shout" not in {t.name for t in await server.list_tools()}:
        server.add_tool(shout)
    await ctx.session.send_tool_list_changed()
    return "added shout"


@server.resource("demo://readme", mime_type="text/plain")
def readme() -> str:
    """The demo readme."""
    return "This is the demo readme."


@server.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Please greet {name} warmly."


def _serve_http(port_file: Path, sse: bool = False) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    app = server.sse_app(host="127.0.0.1") if sse else server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    uv = uvicorn.Server(config)
    tmp = port_file.with_suffix(".tmp")
    tmp.write_text(str(sock.getsockname()[1]))
    tmp.replace(port_file)
    uv.run(sockets=[sock])


if __name__ == "__main__":
    _mark(f"pid-{os.getpid()}")
    if sys.argv[1] in ("http", "sse"):
        _serve_http(Path(sys.argv[2]), sse=sys.argv[1] == "sse")
    else:
        server.run("stdio")
