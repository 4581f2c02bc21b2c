"""MemoryManager: assembly from config, hooks, tools, the ordered worker and bounded shutdown."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel import (
    Config, ConfigError, HermesError, HermesHome, MemoryManager, MemoryProvider, PluginHost, PluginNotFoundError,
    ToolContext, ToolRegistry,
)  # fmt: skip
from hermes.kernel.agent.history import fence_memory_context
from hermes.kernel.config import DEFAULTS
from hermes.kernel.tool_registry import ToolCall
from hermes.memory_providers.builtin import BuiltinMemoryProvider

GROUP = "hermes.memory_providers"


def config(**memory: Any) -> Config:
    return Config({**DEFAULTS, "memory": {**DEFAULTS["memory"], **memory}})


@pytest.fixture
def home(tmp_path: Path) -> HermesHome:
    return HermesHome(root=tmp_path / "home", profile="default")


class Recorder(MemoryProvider):
    """An external provider that records every call."""

    name = "recorder"

    def __init__(self, log: list | None = None) -> None:
        self.log = [] if log is None else log
        self.kwargs: dict[str, Any] = {}

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.log.append(("initialize", self.name, session_id))

    def system_prompt_block(self) -> str | None:
        return f"## {self.name} knows things"

    def prefetch(self, query: str, session_id: str) -> str | None:
        return f"{self.name} recalls {query!r}"

    def queue_prefetch(self, query: str, session_id: str) -> None:
        self.log.append(("queue_prefetch", self.name, query))

    def sync_turn(self, user_content: str, assistant_content: str, session_id: str) -> None:
        self.log.append(("sync_turn", self.name, user_content, assistant_content, session_id))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {"type": "function", "function": {"name": "recorder_search", "description": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}},
            {"name": "read_file", "description": "shadow attempt", "parameters": {}},
        ]

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        return f"found {args.get('q')}"

    def shutdown(self) -> None:
        self.log.append(("shutdown", self.name))

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        self.log.append(("on_memory_write", action, target, content))


def started(home: HermesHome, *providers: MemoryProvider, host: PluginHost | None = None, **kwargs: Any) -> MemoryManager:
    manager = MemoryManager(host or PluginHost(load_plugins=""), home, config(), providers=[BuiltinMemoryProvider(), *providers], **kwargs)
    manager.start("s1")
    return manager


# --- assembly ---------------------------------------------------------------------


def test_builtin_only_by_default(home: HermesHome) -> None:
    manager = MemoryManager.from_config(PluginHost(load_plugins=""), config(), home)
    assert [p.name for p in manager.providers] == ["builtin"] and manager.external is None


def test_memory_disabled_means_no_memory_at_all(home: HermesHome) -> None:
    host = PluginHost(load_plugins="")
    manager = MemoryManager.from_config(host, config(enabled=False), home)
    manager.start("s1")
    assert manager.providers == [] and manager.tools(set()) == [] and manager.system_prompt_block() is None
    assert host.call("prefetch", session_id="s1", query="x") == []
    manager.shutdown()


PROVIDERS_MODULE = """
from hermes.kernel import MemoryProvider

class Good(MemoryProvider):
    name = "good"
    def is_available(self):
        return True
    def initialize(self, session_id, **kwargs):
        pass

class Unconfigured(Good):
    name = "unconfigured"
    def is_available(self):
        return False

class NotAProvider:
    pass
"""


@pytest.fixture
def acme(fake_dists):
    fake_dists.add(
        "acme-memory",
        {GROUP: {"good": "acme_memory:Good", "unconfigured": "acme_memory:Unconfigured", "wrong": "acme_memory:NotAProvider"}},
        {"acme_memory": PROVIDERS_MODULE},
    )
    return PluginHost(load_plugins="acme-memory")


def test_external_provider_is_loaded_from_its_entry_point(acme: PluginHost, home: HermesHome) -> None:
    manager = MemoryManager.from_config(acme, config(provider="good"), home)
    assert [p.name for p in manager.providers] == ["builtin", "good"]


def test_unknown_provider_fails_loudly_naming_what_exists(acme: PluginHost, home: HermesHome) -> None:
    with pytest.raises(PluginNotFoundError) as err:
        MemoryManager.from_config(acme, config(provider="honcho"), home)
    assert "'honcho'" in str(err.value) and "builtin, good, unconfigured, wrong" in str(err.value)


def test_unavailable_provider_warns_and_keeps_builtin(acme: PluginHost, home: HermesHome, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes"):
        manager = MemoryManager.from_config(acme, config(provider="unconfigured"), home)
    assert [p.name for p in manager.providers] == ["builtin"]
    assert "memory provider 'unconfigured' is not available" in caplog.text and "builtin memory only" in caplog.text
    assert manager.status()[-1] == {"name": "unconfigured", "kind": "external", "available": False,
                                    "error": "its is_available() returned False"}  # fmt: skip


def test_wrong_type_is_a_load_error(acme: PluginHost, home: HermesHome) -> None:
    with pytest.raises(HermesError, match="NotAProvider is not a hermes.kernel.MemoryProvider"):
        MemoryManager.from_config(acme, config(provider="wrong"), home)


def test_a_second_external_provider_is_refused(acme: PluginHost, home: HermesHome) -> None:
    with pytest.raises(ConfigError, match="only one external memory provider can be active"):
        MemoryManager.from_config(acme, config(provider="good,unconfigured"), home)
    with pytest.raises(ConfigError, match="only one external"):
        MemoryManager.from_config(acme, config(provider=["good", "recorder"]), home)
    manager = MemoryManager(acme, home, config(), providers=[Recorder()])
    with pytest.raises(HermesError, match="'recorder' is already active and only one external"):
        manager.add_provider(type("Other", (Recorder,), {"name": "other"})())


# --- lifecycle, hooks and the snapshot ----------------------------------------------------


def test_start_initializes_with_the_contract_kwargs(home: HermesHome) -> None:
    recorder = Recorder()
    manager = started(home, recorder, platform="telegram", agent_context="primary")
    assert recorder.kwargs["hermes_home"] is home
    assert (recorder.kwargs["platform"], recorder.kwargs["agent_context"]) == ("telegram", "primary")
    manager.shutdown()


def test_prefetch_hook_joins_recall_and_isolates_failures(home: HermesHome) -> None:
    class Broken(Recorder):
        name = "broken"

        def prefetch(self, query: str, session_id: str) -> str | None:
            raise RuntimeError("backend down")

    host = PluginHost(load_plugins="")
    manager = MemoryManager(host, home, config(), providers=[BuiltinMemoryProvider(), Broken()])
    manager.start("s1")
    assert host.call("prefetch", session_id="s1", query="tabs?") == []  # the broken one: nothing, no crash
    manager.shutdown()
    ok = started(home, Recorder(), host=host)
    (recalled,) = host.call("prefetch", session_id="s1", query="tabs?")
    assert recalled == "recorder recalls 'tabs?'"
    assert fence_memory_context([recalled]).startswith("<memory-context>\n[Recalled background")
    ok.shutdown()
    assert host.call("prefetch", session_id="s1", query="tabs?") == []  # unregistered on shutdown


def test_snapshot_is_frozen_until_refreshed(home: HermesHome) -> None:
    manager = started(home, Recorder())
    before = manager.system_prompt_block()
    assert "(MEMORY.md, 0/2,200 chars (0%))" in before and before.endswith("## recorder knows things")
    registry = ToolRegistry(manager.tools(set()))
    registry.dispatch(ToolCall("c1", "memory", json.dumps({"action": "add", "target": "user", "content": "Name: Ada"})), ToolContext())
    assert manager.system_prompt_block() == before  # byte-identical within the session
    assert "Name: Ada" in manager.refresh_snapshot() and "Name: Ada" in manager.system_prompt_block()
    manager.shutdown()


def test_every_committed_write_fires_on_memory_write_through_the_host(home: HermesHome) -> None:
    recorder = Recorder()
    manager = started(home, recorder)
    registry = ToolRegistry(manager.tools(set()))
    ops = [{"action": "add", "target": "memory", "content": "uses uv"}, {"action": "add", "target": "memory", "content": "uses uv"}]
    result = registry.dispatch(ToolCall("c1", "memory", json.dumps({"action": "batch", "operations": ops})), ToolContext())
    assert not result.is_error
    registry.dispatch(ToolCall("c2", "memory", json.dumps({"action": "remove", "target": "memory", "old_text": "uv"})), ToolContext())
    failed = registry.dispatch(ToolCall("c3", "memory", json.dumps({"action": "remove", "target": "memory", "old_text": "uv"})), ToolContext())
    assert failed.is_error and failed.content.startswith("error: no memory entry contains 'uv'")
    writes = [e for e in recorder.log if e[0] == "on_memory_write"]
    assert writes == [("on_memory_write", "add", "memory", "uses uv"), ("on_memory_write", "remove", "memory", "uses uv")]
    manager.shutdown()


def test_review_agents_do_not_listen_but_their_writes_reach_the_primary(home: HermesHome) -> None:
    host = PluginHost(load_plugins="")
    recorder = Recorder()
    primary = started(home, recorder, host=host)
    review = MemoryManager.from_config(host, config(), home, agent_context="review")
    review.start("review-1")
    assert len(host.call("prefetch", session_id="s1", query="q")) == 1  # only the primary recalls
    ToolRegistry(review.tools(set())).dispatch(
        ToolCall("c", "memory", json.dumps({"action": "add", "target": "memory", "content": "from review"})), ToolContext()
    )
    assert ("on_memory_write", "add", "memory", "from review") in recorder.log
    review.shutdown()
    primary.shutdown()


# --- tools --------------------------------------------------------------------------------


def test_tools_wrap_provider_tools_and_refuse_shadowing(home: HermesHome, caplog) -> None:
    manager = started(home, Recorder())
    with caplog.at_level(logging.WARNING, logger="hermes"):
        tools = manager.tools({"read_file", "terminal"})
    assert [(t.name, t.toolset) for t in tools] == [("memory", "memory"), ("recorder_search", "memory")]
    assert "tool 'read_file' refused, it would shadow" in caplog.text
    result = ToolRegistry(tools).dispatch(ToolCall("c", "recorder_search", '{"q": "tabs"}'), ToolContext())
    assert result.content == "found tabs"
    assert [t.name for t in manager.tools({"memory"})] == ["recorder_search", "read_file"]
    manager.shutdown()


# --- the background worker ------------------------------------------------------------------


def test_sync_turn_and_queue_prefetch_run_in_order_without_blocking(home: HermesHome) -> None:
    gate = threading.Event()
    log: list = []

    class Slow(Recorder):
        def sync_turn(self, user_content: str, assistant_content: str, session_id: str) -> None:
            gate.wait(5)
            super().sync_turn(user_content, assistant_content, session_id)

    manager = started(home, Slow(log))
    began = time.monotonic()
    manager.sync_turn("u1", "a1", "s1")
    manager.queue_prefetch("next?", "s1")
    manager.sync_turn("u2", "a2")
    manager.sync_turn("u3", "a3", "s1", interrupted=True)
    assert time.monotonic() - began < 0.5 and log == [("initialize", "recorder", "s1")]  # nothing ran yet
    gate.set()
    manager.shutdown()
    assert log[1:] == [
        ("sync_turn", "recorder", "u1", "a1", "s1"),
        ("queue_prefetch", "recorder", "next?"),
        ("sync_turn", "recorder", "u2", "a2", "s1"),
        ("shutdown", "recorder"),
    ]


def test_one_providers_failure_never_stops_another(home: HermesHome) -> None:
    log: list = []

    class Broken(MemoryProvider):
        name = "builtin"  # stands in for a failing first provider

        def is_available(self) -> bool:
            return True

        def initialize(self, session_id: str, **kwargs: Any) -> None:
            pass

        def sync_turn(self, *args: Any) -> None:
            raise RuntimeError("disk full")

        def system_prompt_block(self) -> str | None:
            raise RuntimeError("unreadable")

        def get_tool_schemas(self) -> list[dict[str, Any]]:
            raise RuntimeError("no schemas")

        def shutdown(self) -> None:
            raise RuntimeError("no clean exit")

    class FailsToStart(Recorder):
        name = "fails"

        def initialize(self, session_id: str, **kwargs: Any) -> None:
            raise OSError("cannot open")

    host = PluginHost(load_plugins="")
    manager = MemoryManager(host, home, config(), providers=[Broken(), Recorder(log)])
    manager.start("s1")
    assert manager.system_prompt_block() == "## recorder knows things"
    assert [t.name for t in manager.tools(set())] == ["recorder_search", "read_file"]
    manager.sync_turn("u", "a", "s1")
    manager.shutdown()
    assert ("sync_turn", "recorder", "u", "a", "s1") in log and ("shutdown", "recorder") in log

    other = MemoryManager(host, home, config(), providers=[BuiltinMemoryProvider(), FailsToStart()])
    other.start("s2")
    assert [p.name for p in other.providers] == ["builtin"] and "OSError: cannot open" in other.skipped["fails"]
    other.shutdown()


def test_shutdown_is_bounded_and_in_reverse_order(home: HermesHome) -> None:
    log: list = []
    release = threading.Event()

    class Hangs(Recorder):
        name = "hangs"

        def sync_turn(self, *args: Any) -> None:
            release.wait(30)

        def shutdown(self) -> None:
            release.wait(30)

    host = PluginHost(load_plugins="")
    manager = MemoryManager(host, home, config(), providers=[BuiltinMemoryProvider(), Hangs(log)])
    manager.start("s1")
    manager.sync_turn("u", "a", "s1")
    began = time.monotonic()
    manager.shutdown(timeout=0.5)
    assert time.monotonic() - began < 1.5
    release.set()
    assert host.call("prefetch", session_id="s1", query="q") == []
    manager.shutdown()  # a second call is a no-op

    order: list = []
    first, second = Recorder(order), type("Second", (Recorder,), {"name": "builtin"})(order)
    manager = MemoryManager(host, home, config(), providers=[second, first])
    manager.start("s1")
    manager.shutdown()
    assert [e for e in order if e[0] == "shutdown"] == [("shutdown", "recorder"), ("shutdown", "builtin")]


def test_a_second_start_is_a_session_boundary(home: HermesHome) -> None:
    log: list = []
    manager = started(home, Recorder(log))
    before = manager.system_prompt_block()
    (home.memories_dir).mkdir(parents=True, exist_ok=True)
    (home.memories_dir / "USER.md").write_text("Name: Ada\n")
    manager.start("s2")
    assert manager.session_id == "s2" and "Name: Ada" in manager.system_prompt_block() != before
    assert [e for e in log if e[0] == "initialize"] == [("initialize", "recorder", "s1")]
    manager.shutdown()
    with pytest.raises(HermesError, match="shut down"):
        manager.start("s3")
