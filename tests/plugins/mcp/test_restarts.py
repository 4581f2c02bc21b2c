"""Restart counting of the hub against a real stdio server that crashes on request."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.plugins.mcp.hub import McpCallError, McpHub
from hermes.plugins.mcp.settings import GlobalSettings, parse_servers
from tests.plugins.mcp.servers import pids, stdio_server, wait_for

pytestmark = pytest.mark.slow


def crash(hub: McpHub) -> None:
    with pytest.raises(McpCallError, match="stopped during"):
        hub.run("local", lambda session: session.call_tool("crash", {}), what="tool crash")


def settled(hub: McpHub, marks: Path, started: int) -> str:
    """The status once the server has given up, or is ready again as its ``started``-th process."""
    state = hub.states["local"]
    wait_for(lambda: state.status == "failed" or (state.status == "ready" and len(pids(marks)) >= started), 30)
    return state.status


@pytest.fixture
def make_hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    hubs: list[McpHub] = []

    def make(max_restarts: int) -> tuple[McpHub, Path]:
        marks = tmp_path / f"marks-{len(hubs)}"
        specs, problems = parse_servers({"servers": {"local": stdio_server(marks)}})
        assert not problems
        settings = GlobalSettings(max_restarts=max_restarts, restart_backoff=0.05, restart_backoff_max=0.1)
        hub = McpHub(specs, settings, log_dir=tmp_path / "logs", warn=False)
        hubs.append(hub)
        hub.start()
        hub.wait_ready()
        assert hub.states["local"].status == "ready"
        return hub, marks

    yield make
    for hub in hubs:
        hub.close()


@pytest.mark.parametrize("max_restarts", [0, 2])
def test_a_server_that_keeps_dying_is_restarted_exactly_max_restarts_times(make_hub, max_restarts: int) -> None:  # type: ignore[no-untyped-def]
    hub, marks = make_hub(max_restarts)
    for restart in range(max_restarts):
        crash(hub)
        assert settled(hub, marks, restart + 2) == "ready"  # each of the allowed restarts happens
    crash(hub)
    assert settled(hub, marks, max_restarts + 2) == "failed"  # one more death is one too many
    state = hub.states["local"]
    assert state.restarts == max_restarts
    assert f"stopped after {max_restarts} restarts" in state.error
    assert len(pids(marks)) == max_restarts + 1  # the first process and one per restart
    with pytest.raises(McpCallError, match="not available"):
        hub.run("local", lambda session: session.call_tool("echo", {"text": "x"}))


def test_a_long_healthy_uptime_starts_a_fresh_count(make_hub) -> None:  # type: ignore[no-untyped-def]
    hub, marks = make_hub(1)
    state = hub.states["local"]
    crash(hub)  # a quick death: restart 1 of 1
    assert settled(hub, marks, 2) == "ready"
    state.started_at -= 3600  # this process has been up for an hour before it dies
    crash(hub)
    assert settled(hub, marks, 3) == "ready"  # a fresh count: restart 1 of 1 again, not 2 of 1
    crash(hub)  # a quick death right after: now the count is used up
    assert settled(hub, marks, 4) == "failed"
    assert len(pids(marks)) == 3
