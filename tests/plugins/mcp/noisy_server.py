"""Misbehaving MCP servers for the tests, written with the ``mcp`` SDK's server API.

``python noisy_server.py MODE``:

- ``secrets``: prints a GitHub token and an OpenAI key to stderr at start and in its ``echo`` tool;
- ``flood``: answers ``initialize``, then writes endless non-JSON lines to stdout;
- ``hang``: never answers ``initialize`` (it reads nothing and sleeps).

Every mode but ``hang`` has ``think`` (asks the client's model by sampling) and ``caps`` (whether
the client advertised sampling).

``NOISY_MARK_DIR`` (optional) receives ``pid-<pid>`` at start.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
OPENAI_KEY = "sk-proj-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"

mode = sys.argv[1] if len(sys.argv) > 1 else "secrets"
if os.environ.get("NOISY_MARK_DIR"):
    marks = Path(os.environ["NOISY_MARK_DIR"])
    marks.mkdir(parents=True, exist_ok=True)
    (marks / f"pid-{os.getpid()}").write_text(mode)

if mode == "hang":
    time.sleep(600)
    sys.exit(0)

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.types import SamplingMessage, TextContent  # noqa: E402

server = MCPServer("noisy")


@server.tool()
def echo(text: str) -> str:
    """Return the text; the server also logs a secret to stderr."""
    print(f"debug: calling upstream with Authorization: Bearer {GITHUB_TOKEN}", file=sys.stderr, flush=True)
    return f"echo: {text}"


@server.tool()
async def think(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling) and return its answer."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=40
    )
    content = result.content
    return f"model {result.model} said: {content.text if isinstance(content, TextContent) else content}"


@server.tool()
def caps(ctx: Context) -> str:
    """Whether the client advertised the sampling capability."""
    capabilities = ctx.session.client_capabilities
    return f"sampling advertised: {'yes' if capabilities is not None and capabilities.sampling is not None else 'no'}"


def _flood(wire: int) -> None:
    time.sleep(0.5)  # after the handshake: the client is up and reading
    line = ("this is not JSON-RPC, just noise " * 8 + "\n").encode()
    try:
        while True:
            os.write(wire, line)
    except OSError:
        os._exit(0)


if __name__ == "__main__":
    if mode == "secrets":
        print(f"starting with GITHUB_TOKEN={GITHUB_TOKEN}", file=sys.stderr, flush=True)
        print(f"openai key loaded: {OPENAI_KEY}", file=sys.stderr, flush=True)
    if mode == "flood":
        # The SDK diverts fd 1 to stderr while it serves; a duplicate taken first reaches the wire.
        threading.Thread(target=_flood, args=(os.dup(1),), daemon=True).start()
    server.run("stdio")
