"""An SSE server that goes away mid-session: one line on the terminal at most, the traceback in its log."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat
from tests.plugins.mcp.servers import http_demo, write_config

pytestmark = pytest.mark.slow


def test_an_sse_disconnect_is_at_most_one_line_and_never_a_traceback(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    marks = tmp_path / "marks"
    with http_demo(tmp_path, marks, "sse") as url:
        write_config(hermes_home, {"old": {"url": url, "transport": "sse"}}, restart_backoff=0.1, max_restarts=1)
        server.tool_calls(("mcp_old_echo", {"text": "first"}))
        server.tool_calls(("mcp_old_crash", {}))
        server.tool_calls(("mcp_old_echo", {"text": "again?"}))
        server.reply("the sse server is gone")
        result = hermes_chat("-q", "go", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the sse server is gone\n"
    assert "Traceback" not in result.stderr and "File \"" not in result.stderr
    noise = [line for line in result.stderr.splitlines() if "old" in line and not line.lstrip().startswith(("→", "✓", "✗"))]
    assert len(noise) <= 1, result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("hermes: WARNING")]) <= 1, result.stderr
    assert len(result.stderr.splitlines()) < 15, result.stderr
    log = hermes_home / "logs" / "mcp-old.log"
    assert log.exists() and log.stat().st_mode & 0o777 == 0o600
    assert "RemoteProtocolError" in log.read_text()  # the disconnect's traceback is kept, in the log
