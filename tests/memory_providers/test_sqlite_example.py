"""examples/hermes-memory-sqlite through the real manager and host (installed for real in tests/e2e)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel import Config, HermesHome, MemoryManager, PluginHost, ToolContext, ToolRegistry
from hermes.kernel.agent.history import fence_memory_context
from hermes.kernel.config import DEFAULTS
from hermes.kernel.tool_registry import ToolCall

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hermes-memory-sqlite"


@pytest.fixture
def host(fake_dists, monkeypatch: pytest.MonkeyPatch) -> PluginHost:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    # An entry point exactly like the package's own, without running pip (tests/e2e does that).
    fake_dists.add("hermes-memory-sqlite", {"hermes.memory_providers": {"sqlite": "hermes_memory_sqlite:SqliteMemoryProvider"}})
    fake_dists._modules.add("hermes_memory_sqlite")
    return PluginHost(load_plugins="hermes-memory-sqlite")


def manager_for(host: PluginHost, home: HermesHome, session_id: str, **kwargs) -> MemoryManager:
    config = Config({**DEFAULTS, "memory": {**DEFAULTS["memory"], "provider": "sqlite"}})
    manager = MemoryManager.from_config(host, config, home, **kwargs)
    manager.start(session_id)
    return manager


def test_turns_are_stored_and_recalled_in_a_later_session(host: PluginHost, tmp_path: Path) -> None:
    home = HermesHome(root=tmp_path / "home", profile="default")
    first = manager_for(host, home, "s1")
    first.sync_turn("Which database does the billing service use?", "Billing runs on PostgreSQL 16.", "s1")
    first.sync_turn("Thanks", "You're welcome.", "s1", interrupted=True)
    assert host.call("prefetch", session_id="s1", query="billing database") == []  # same session: already in context
    first.shutdown()

    second = manager_for(host, home, "s2")
    assert [p.name for p in second.providers] == ["builtin", "sqlite"]
    (recalled,) = host.call("prefetch", session_id="s2", query="what database for billing?")
    assert "Billing runs on PostgreSQL 16." in recalled and "Thanks" not in recalled
    assert "<memory-context>" in fence_memory_context([recalled])
    tools = ToolRegistry(second.tools({"read_file"}))
    assert tools.names == ["memory", "past_turns_search"]
    found = tools.dispatch(ToolCall("c", "past_turns_search", '{"query": "postgresql"}'), ToolContext())
    assert "[s1] user: Which database" in found.content
    tools.dispatch(ToolCall("m", "memory", json.dumps({"action": "add", "target": "memory", "content": "Billing: PostgreSQL 16"})), ToolContext())
    host.call("on_session_switch", old_session_id="s2", new_session_id="s3", reason="compression")
    (pre,) = host.call("on_pre_compress", session_id="s3", messages=[{"role": "user", "content": "fix the billing export"}])
    assert "- fix the billing export" in pre
    second.shutdown()

    with sqlite3.connect(home.path / "memory-sqlite.db") as conn:
        assert conn.execute("SELECT count(*) FROM turns").fetchone() == (1,)
        assert conn.execute("SELECT kind, detail FROM events ORDER BY id").fetchall() == [
            ("memory_write", "add memory: Billing: PostgreSQL 16"),
            ("session_switch", "s2 -> s3 (compression)"),
        ]
    status = {r["name"]: r for r in MemoryManager.from_config(host, Config({**DEFAULTS, "memory": {**DEFAULTS["memory"], "provider": "sqlite"}}), home).status()}
    assert status["sqlite"]["turns"] == 1 and status["sqlite"]["available"] is True


def test_non_primary_agents_do_not_store_turns(host: PluginHost, tmp_path: Path) -> None:
    home = HermesHome(root=tmp_path / "home", profile="default")
    review = manager_for(host, home, "r1", agent_context="review")
    review.sync_turn("review the conversation", "nothing to save", "r1")
    review.shutdown()
    with sqlite3.connect(home.path / "memory-sqlite.db") as conn:
        assert conn.execute("SELECT count(*) FROM turns").fetchone() == (0,)


def test_an_agent_with_the_sqlite_provider_recalls_syncs_and_compresses(host: PluginHost, tmp_path: Path) -> None:
    """The loop and the manager together, in process (the CLI chat e2e needs the factory wiring)."""
    from hermes.kernel import ContextEngine
    from hermes.kernel.agent import Agent, ModelRoute
    from hermes.kernel.testing import Fault, Reply, ScriptedProvider, ToolCall as ScriptedCall
    from tests.kernel.agent.conftest import echo_tools, scripted_client

    home = HermesHome(root=tmp_path / "home", profile="default")
    config = Config({**DEFAULTS, "memory": {**DEFAULTS["memory"], "provider": "sqlite"}})
    store = SQLiteSessionStore(tmp_path / "state.db")

    class Engine(ContextEngine):
        name = "test"

        def update_from_response(self, usage):
            pass

        def should_compress(self, prompt_tokens=None):
            return False

        def compress(self, messages, current_tokens=None, focus_topic=None):
            self.seen = list(self.pre_compress_context)
            return [{"role": "user", "content": "[summary] " + " / ".join(self.seen)}, *messages[-1:]]

    def agent(provider: ScriptedProvider, **kw) -> tuple[Agent, MemoryManager]:
        memory = MemoryManager.from_config(host, config, home)
        tools = echo_tools()
        for tool in memory.tools(set(tools.names)):
            tools.add(tool)
        route = ModelRoute(scripted_client(provider), "m")
        return Agent(routes=[route], tools=tools, host=host, store=store, memory=memory, cwd=tmp_path, stream=False, **kw), memory

    first_provider = ScriptedProvider(
        Reply(tool_calls=[ScriptedCall("memory", {"action": "add", "target": "user", "content": "Works on the staging cluster"})]),
        Reply("Staging listens on port 8443."),
    )
    first, _ = agent(first_provider)
    assert first.run_conversation("Which port does staging use?")["completed"]
    first.close()  # drains the memory worker

    engine = Engine()
    provider = ScriptedProvider(Reply("It is 8443."), Fault("context_overflow", limit=1000), Reply("Still 8443."))
    second, memory = agent(provider, engine=engine)
    assert second.run_conversation("remind me: what port for staging?")["final_response"] == "It is 8443."
    request = provider.requests[0].messages
    assert "Works on the staging cluster" in request[0]["content"]  # the builtin snapshot, in the system prompt
    user = request[-1]["content"]
    assert user.startswith("<memory-context>\n[Recalled background") and "Staging listens on port 8443." in user
    assert user.endswith("</memory-context>\n\nremind me: what port for staging?")
    stored = [m["content"] for m in store.get_messages(second.session_id) if m["role"] == "user"]
    assert stored == ["remind me: what port for staging?"]  # recall is never persisted

    old_session = second.session_id
    assert second.run_conversation("and for production?")["final_response"] == "Still 8443."
    assert any("kept by hermes-memory-sqlite" in text for text in engine.seen)  # on_pre_compress reached the engine
    assert second.session_id != old_session and memory.session_id == second.session_id
    second.close()
    store.close()
    with sqlite3.connect(home.path / "memory-sqlite.db") as conn:
        kinds = [k for (k,) in conn.execute("SELECT kind FROM events ORDER BY id")]
        turns = conn.execute("SELECT user_content FROM turns ORDER BY id").fetchall()
    assert kinds == ["memory_write", "session_switch"]
    assert turns == [("Which port does staging use?",), ("remind me: what port for staging?",), ("and for production?",)]
