"""What MCP tools reach the model, read from the fake model server's request log of a real ``hermes chat``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat
from tests.e2e.test_mcp_chat import offered, tool_results
from tests.plugins.mcp.servers import stdio_server, write_config

pytestmark = pytest.mark.slow

PAGED = Path(__file__).parents[1] / "plugins" / "mcp" / "paged_server.py"


def paged_server(marks: Path, **extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(PAGED)], "env": {"PAGED_MARK_DIR": str(marks)}, **extra}


def test_filters_pages_capabilities_and_clashes_in_what_the_model_is_offered(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    marks = tmp_path / "marks"
    write_config(hermes_home, {
        "paged": paged_server(marks, exclude=["tool_03"]),
        "only": stdio_server(marks, include=["echo", "get_prompt"]),  # filters the prompt and resource tools too
        "most": stdio_server(marks, exclude=["read_resource", "get_prompt", "crash"]),
    })  # fmt: skip
    server.tool_calls(("mcp_paged_tool_24", {}), ("mcp_paged_dup_name", {}))
    server.reply("done")
    result = hermes_chat("-q", "list", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    names = set(offered(server))
    paged = {n for n in names if n.startswith("mcp_paged_")}
    # Every page of tools/list was read (27 tools in pages of 10), less the excluded one.
    assert sorted((marks).glob("listed-*")) == [marks / f"listed-{i}" for i in (0, 10, 20)]
    assert {f"mcp_paged_tool_{i:02d}" for i in range(25) if i != 3} < paged and "mcp_paged_tool_03" not in paged
    # dup.name and dup_name sanitise alike: the one sorting first keeps the name, the other a fixed suffix.
    (suffixed,) = paged - {f"mcp_paged_tool_{i:02d}" for i in range(25)} - {"mcp_paged_dup_name"}
    assert suffixed.startswith("mcp_paged_dup_name_") and len(suffixed) == len("mcp_paged_dup_name_") + 6
    assert len(paged) == 26
    # It declares resources but has none: no resource tools.
    assert not {"mcp_paged_list_resources", "mcp_paged_read_resource"} & names
    assert {n for n in names if n.startswith("mcp_only_")} == {"mcp_only_echo", "mcp_only_get_prompt"}
    most = {n for n in names if n.startswith("mcp_most_")}
    assert "mcp_most_list_resources" in most and "mcp_most_echo" in most
    assert not {"mcp_most_read_resource", "mcp_most_get_prompt", "mcp_most_crash"} & most
    assert list(tool_results(server).values()) == ["tool_24 ran", "dup.name ran"]
    clash = [line for line in result.stderr.splitlines() if "already used" in line]
    assert len(clash) == 1 and "paged/dup_name" in clash[0] and suffixed in clash[0]
    # The same servers give the same name in a second session.
    server.tool_calls((suffixed, {}))
    server.reply("again")
    again = hermes_chat("-q", "again", env=chat_env(server), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert list(tool_results(server).values()) == ["dup_name ran"]


def test_a_server_that_gave_up_restarting_is_withdrawn_and_the_model_told_once(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    marks = tmp_path / "marks"
    write_config(hermes_home, {"local": stdio_server(marks), "other": stdio_server(marks)}, max_restarts=0)
    server.tool_calls(("mcp_local_crash", {}))
    server.tool_calls(("mcp_other_slow", {"seconds": 0.5}))
    server.tool_calls(("mcp_other_echo", {"text": "a"}))
    server.tool_calls(("mcp_other_echo", {"text": "b"}))
    server.reply("carried on")
    result = hermes_chat("-q", "crash", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mcp_local_echo" in offered(server, 0)
    for later in (2, 3, 4):
        assert not any(n.startswith("mcp_local_") for n in offered(server, later)), later
        assert "mcp_other_echo" in offered(server, later)
    results = [m["content"] for m in server.requests[-1].messages if m.get("role") == "tool"]
    assert results[0].startswith("error: ") and "stopped during tool crash" in results[0]
    notes = [r for r in results if "note: MCP server 'local' is down for good" in r]
    assert len(notes) == 1 and "withdrawn" in notes[0]
    assert results[-1] == "echo: b"
