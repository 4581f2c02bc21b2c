"""The reference MCP servers from npm (server-filesystem, server-everything) in a real ``hermes chat``.

The packages come from the test cache (tests/npm_servers.py; ``.ci/run`` installs them).
What the model receives is read from the fake model server's request log.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat
from tests.e2e.test_mcp_chat import offered, tool_results
from tests.npm_servers import server_command
from tests.plugins.mcp.servers import write_config

pytestmark = pytest.mark.slow


def test_filesystem_server_images_are_files_and_text_is_sent_once(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    files = tmp_path / "files"
    files.mkdir()
    png = b"\x89PNG\r\n\x1a\n" + os.urandom(58_000)
    (files / "photo.png").write_bytes(png)
    text = "".join(f"line {i:05d}: the quick brown fox jumps over the lazy dog\n" for i in range(1_300))  # ~78 KB
    (files / "notes.txt").write_text(text)
    write_config(hermes_home, {"fs": server_command("filesystem", str(files))})
    server.tool_calls(
        ("mcp_fs_read_media_file", {"path": str(files / "photo.png")}),
        ("mcp_fs_read_text_file", {"path": str(files / "notes.txt")}),
    )
    server.reply("read both")
    result = hermes_chat("-q", "read the files", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "read both\n"
    image, notes = tool_results(server).values()
    # The image reaches the model as one line naming a file, not as base64 (it is also in structuredContent).
    assert "\n" not in image and image.startswith("[image/png, 57 KB, saved to "), image[:200]
    saved = Path(image.split("saved to ", 1)[1].rstrip("]"))
    assert saved.parent == hermes_home / "results" and saved.read_bytes() == png
    body = json.dumps(server.requests[-1].body)
    assert base64.b64encode(png[:3000]).decode()[:200] not in body
    # The text once, not again as {"content": text}.
    assert notes == text.rstrip("\n") or notes == text
    assert body.count("line 00777:") == 1
    grown = len(body) - len(json.dumps(server.requests[0].body))
    assert len(text) < grown < len(text) * 1.2  # the file once (JSON escapes add a little), the image a line


def test_everything_server_tools_work(fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path) -> None:
    server = fake_model_server
    write_config(hermes_home, {"ev": server_command("everything")})
    server.tool_calls(
        ("mcp_ev_echo", {"message": "hi there"}),
        ("mcp_ev_get-sum", {"a": 2, "b": 40}),
        ("mcp_ev_get-structured-content", {"location": "Chicago"}),
        ("mcp_ev_get-tiny-image", {}),
        ("mcp_ev_read_resource", {"uri": "demo://resource/static/document/architecture.md"}),
    )
    server.reply("all worked")
    result = hermes_chat("-q", "try everything", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tools = offered(server)
    assert {"mcp_ev_echo", "mcp_ev_get-sum", "mcp_ev_list_resources", "mcp_ev_get_prompt"} <= set(tools)
    assert tools["mcp_ev_get-sum"]["parameters"]["type"] == "object" and "$schema" not in tools["mcp_ev_get-sum"]["parameters"]
    echo, total, weather, tiny, resource = tool_results(server).values()
    assert echo == "Echo: hi there"
    assert "42" in total
    assert set(json.loads(weather)) == {"temperature", "conditions", "humidity"}  # text and structured: once
    first, line = tiny.splitlines()[:2]
    assert "image" in first and line.startswith("[image/png, ") and "saved to " in line
    assert resource.startswith("[resource demo://resource/static/document/architecture.md]")
