"""MemoryManager, exactly: what config means, the messages and log lines a user reads, tool and status shapes.

test_manager.py tells the story; these pin the details a caller observes, each
chosen so a one-line slip in kernel/memory/manager.py fails a test (issue 20).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel import (
    Config, ConfigError, HermesError, HermesHome, MemoryManager, MemoryProvider, PluginHost, PluginLoadError,
)  # fmt: skip
from hermes.memory_providers.builtin import BuiltinMemoryProvider

from .test_manager import GROUP, Recorder, config

MANAGER_LOG = "hermes.kernel.memory.manager"
WORKER_LOG = "hermes.kernel.memory.worker"


@pytest.fixture
def home(tmp_path: Path) -> HermesHome:
    return HermesHome(root=tmp_path / "home", profile="default")


def warnings(caplog: pytest.LogCaptureFixture, logger: str = MANAGER_LOG) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING]


class Plain(MemoryProvider):
    """A provider that records what it is given; its name is the first argument."""

    def __init__(self, name: str = "builtin", log: list | None = None) -> None:
        self.name = name
        self.log = [] if log is None else log

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.log.append(("initialize", self.name, session_id, kwargs))

    def sync_turn(self, user_content: str, assistant_content: str, session_id: str) -> None:
        self.log.append(("sync_turn", self.name, user_content, assistant_content, session_id))

    def queue_prefetch(self, query: str, session_id: str) -> None:
        self.log.append(("queue_prefetch", self.name, query, session_id))


# --- what memory.* in config means ----------------------------------------------------------


PROVIDERS_MODULE = """
from hermes.kernel import MemoryProvider

class Good(MemoryProvider):
    name = "good"
    def is_available(self):
        return True
    def initialize(self, session_id, **kwargs):
        pass

class Nameless(Good):
    name = ""

class Flaky(Good):
    name = "flaky"
    def is_available(self):
        raise ValueError("no API key in FLAKY_KEY")

class NotAProvider:
    pass

READY = Good()  # an entry point may name an object, not a class
READY.name = "ready"
"""


@pytest.fixture
def zeta(fake_dists) -> PluginHost:
    entry_points = {"good": "Good", "nameless": "Nameless", "flaky": "Flaky", "wrong": "NotAProvider", "ready": "READY"}
    fake_dists.add("zeta-memory", {GROUP: {k: f"zeta_memory:{v}" for k, v in entry_points.items()}},
                   {"zeta_memory": PROVIDERS_MODULE})  # fmt: skip
    return PluginHost(load_plugins="zeta-memory")


@pytest.mark.parametrize("value", [False, 0, "false", "FALSE", " No ", "off", "0", ""])
def test_memory_enabled_off_values(value: Any, home: HermesHome) -> None:
    manager = MemoryManager.from_config(PluginHost(load_plugins=""), config(enabled=value), home)
    assert manager.enabled is False and manager.providers == []


@pytest.mark.parametrize("value", [True, 1, "true", "yes", "On", "1"])
def test_memory_enabled_on_values(value: Any, home: HermesHome) -> None:
    manager = MemoryManager.from_config(PluginHost(load_plugins=""), config(enabled=value), home)
    assert manager.enabled is True and [p.name for p in manager.providers] == ["builtin"]


def test_a_config_without_a_memory_section_means_builtin_memory_on(home: HermesHome) -> None:
    manager = MemoryManager.from_config(PluginHost(load_plugins=""), Config({}), home)
    assert manager.enabled is True and [p.name for p in manager.providers] == ["builtin"] and manager.skipped == {}


@pytest.mark.parametrize("enabled", [True, False])
def test_from_config_passes_everything_on(enabled: bool, home: HermesHome) -> None:
    host, cfg = PluginHost(load_plugins=""), config(enabled=enabled)
    manager = MemoryManager.from_config(host, cfg, home, agent_context="review", platform="telegram")
    assert (manager.host, manager.home, manager.config) == (host, home, cfg)
    assert (manager.agent_context, manager.platform, manager.enabled, manager.listen) == ("review", "telegram", enabled, False)
    default = MemoryManager.from_config(host, cfg, home)
    assert (default.agent_context, default.platform, default.listen) == ("primary", "cli", True)


def test_constructor_defaults_and_a_bad_agent_context(home: HermesHome) -> None:
    manager = MemoryManager(PluginHost(load_plugins=""), home)
    assert (manager.config, manager.platform, manager.agent_context, manager.enabled) == (None, "cli", "primary", True)
    assert manager.session_id is None and manager.system_prompt_block() is None and manager.providers == []
    with pytest.raises(ValueError) as err:
        MemoryManager(PluginHost(load_plugins=""), home, agent_context="boss")
    assert str(err.value) == "agent_context must be one of primary, subagent, review, not 'boss'"


def test_listen_can_be_forced_either_way(home: HermesHome) -> None:
    host = PluginHost(load_plugins="")
    quiet = MemoryManager(host, home, config(), providers=[Recorder()], listen=False)
    quiet.start("s1")
    assert quiet.listen is False and host.call("prefetch", session_id="s1", query="q") == []
    quiet.shutdown()
    loud = MemoryManager(host, home, config(), providers=[Recorder()], agent_context="review", listen=True)
    loud.start("s1")
    assert host.call("prefetch", session_id="s1", query="q") == ["recorder recalls 'q'"]
    loud.shutdown()


@pytest.mark.parametrize("value", ["good", ["good"], "builtin,good", ["builtin", " good "], "good, ", " ,good,,"])
def test_memory_provider_names_one_external(value: Any, zeta: PluginHost, home: HermesHome) -> None:
    manager = MemoryManager.from_config(zeta, config(provider=value), home)
    assert [p.name for p in manager.providers] == ["builtin", "good"]


@pytest.mark.parametrize("value", ["", None, "builtin", [], ["builtin", ""]])
def test_memory_provider_names_none(value: Any, zeta: PluginHost, home: HermesHome) -> None:
    manager = MemoryManager.from_config(zeta, config(provider=value), home)
    assert [p.name for p in manager.providers] == ["builtin"]


def test_two_external_providers_is_one_line_with_the_fix(zeta: PluginHost, home: HermesHome) -> None:
    with pytest.raises(ConfigError) as err:
        MemoryManager.from_config(zeta, config(provider="builtin, good,ready"), home)
    assert str(err.value) == (
        "memory.provider names 2 providers (good, ready); only one external memory provider can be active: "
        "`hermes config set memory.provider good`"
    )


def test_entry_points_give_a_class_or_an_object_and_name_a_nameless_one(zeta: PluginHost, home: HermesHome) -> None:
    import zeta_memory  # on sys.path through fake_dists

    ready = MemoryManager.from_config(zeta, config(provider="ready"), home)
    assert ready.external is zeta_memory.READY  # used as it is, never called
    nameless = MemoryManager.from_config(zeta, config(provider="nameless"), home)
    assert [p.name for p in nameless.providers] == ["builtin", "nameless"]
    with pytest.raises(PluginLoadError) as err:
        MemoryManager.from_config(zeta, config(provider="wrong"), home)
    assert (err.value.group, err.value.name) == (GROUP, "wrong")
    assert str(err.value) == (
        "'hermes.memory_providers' plugin 'wrong' failed to load: NotAProvider is not a hermes.kernel.MemoryProvider"
    )


def test_an_is_available_that_raises_leaves_the_provider_out(zeta: PluginHost, home: HermesHome, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes"):
        manager = MemoryManager.from_config(zeta, config(provider="flaky"), home)
    why = "its is_available() raised ValueError: no API key in FLAKY_KEY"
    assert [p.name for p in manager.providers] == ["builtin"] and manager.skipped == {"flaky": why}
    assert warnings(caplog) == [
        f"memory provider 'flaky' is not available ({why}: check its settings and dependencies); using the builtin memory only"
    ]


def test_a_disabled_builtin_is_said_once(home: HermesHome, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes"):
        manager = MemoryManager.from_config(PluginHost(load_plugins="", disabled=["builtin"]), config(), home)
    assert manager.providers == [] and manager.enabled is True
    assert warnings(caplog) == ["the builtin memory provider is disabled (plugins.disabled); MEMORY.md and USER.md are not used"]


def test_a_replacement_builtin_without_a_name_is_called_builtin(fake_dists, home: HermesHome) -> None:
    module = PROVIDERS_MODULE + "\nclass Mine(Nameless):\n    pass\n"
    fake_dists.add("own-builtin", {GROUP: {"builtin": "own_builtin:Mine"}}, {"own_builtin": module})
    host = PluginHost(load_plugins="own-builtin", disabled=["hermes-kernel"])
    manager = MemoryManager.from_config(host, config(), home)
    assert [(type(p).__name__, p.name) for p in manager.providers] == [("Mine", "builtin")] and manager.external is None


# --- assembly and lifecycle messages ------------------------------------------------------------


def test_add_provider_and_start_refusals_say_exactly_why(home: HermesHome) -> None:
    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[BuiltinMemoryProvider()])
    with pytest.raises(HermesError) as twice:
        manager.add_provider(BuiltinMemoryProvider())
    assert str(twice.value) == "memory provider 'builtin' is already active"
    manager.start("s1")
    with pytest.raises(HermesError) as late:
        manager.add_provider(Recorder())
    assert str(late.value) == "memory providers must be added before the manager starts"
    manager.shutdown()
    with pytest.raises(HermesError) as closed:
        manager.start("s2")
    assert str(closed.value) == "the memory manager was shut down; build a new one"


def test_start_gives_each_provider_the_contract_kwargs(home: HermesHome) -> None:
    cfg, log = config(), []
    manager = MemoryManager(PluginHost(load_plugins=""), home, cfg, providers=[Plain(log=log)])
    manager.start("s1")
    ((event, name, session_id, kwargs),) = log
    assert (event, name, session_id) == ("initialize", "builtin", "s1")
    assert sorted(kwargs) == ["agent_context", "config", "hermes_home", "notify_memory_write", "platform"]
    assert (kwargs["config"], kwargs["hermes_home"], kwargs["platform"], kwargs["agent_context"]) == (cfg, home, "cli", "primary")
    manager.shutdown()


def test_a_provider_that_fails_to_initialize_is_named_in_the_log(home: HermesHome, caplog) -> None:
    class FailsToStart(Recorder):
        name = "fails"

        def initialize(self, session_id: str, **kwargs: Any) -> None:
            raise OSError("cannot open")

    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[Plain(), FailsToStart()])
    with caplog.at_level(logging.WARNING, logger="hermes"):
        manager.start("s1")
    assert warnings(caplog) == ["memory provider 'fails' failed to initialize and is left out: OSError: cannot open"]
    assert manager.skipped == {"fails": "initialize raised OSError: cannot open"}
    manager.shutdown()


def test_hook_registrations_are_named_per_manager(home: HermesHome) -> None:
    host = PluginHost(load_plugins="")
    first, second = Recorder(), Recorder()
    a = MemoryManager(host, home, config(), providers=[first])
    b = MemoryManager(host, home, config(), providers=[second])
    a.start("s1")
    b.start("s1")
    assert [host.pm.get_name(obj) for obj in (first, a, second, b)] == [
        f"memory:recorder@{id(a):x}", f"memory@{id(a):x}", f"memory:recorder@{id(b):x}", f"memory@{id(b):x}",
    ]  # fmt: skip
    assert host.call("prefetch", session_id="s1", query="q") == ["recorder recalls 'q'"] * 2  # both agents listen
    b.shutdown()
    a.shutdown()


def test_a_registration_failure_is_logged_and_the_rest_still_register(home: HermesHome, caplog) -> None:
    host = PluginHost(load_plugins="")
    shared, other = Recorder(), Plain()
    first = MemoryManager(host, home, config(), providers=[shared])
    first.start("s1")
    second = MemoryManager(host, home, config(), providers=[shared, other])
    with caplog.at_level(logging.WARNING, logger="hermes"):
        second.start("s1")
    assert warnings(caplog) == [
        f"memory:recorder could not be registered for hooks: plugin 'memory:recorder@{id(second):x}' is already registered or blocked"
    ]
    assert host.pm.is_registered(other) and host.pm.get_name(second) == f"memory@{id(second):x}"
    first.shutdown()
    second.shutdown()
    assert not host.pm.is_registered(other) and not host.pm.is_registered(second)


# --- shutdown ----------------------------------------------------------------------------------


class SlowShutdown(Plain):
    def __init__(self, name: str, log: list, seconds: float = 0.0, until: threading.Event | None = None) -> None:
        super().__init__(name, log)
        self.seconds, self.until = seconds, until

    def shutdown(self) -> None:
        if self.until is not None:
            self.until.wait(30)
        time.sleep(self.seconds)
        thread = threading.current_thread()
        self.log.append(("shutdown", self.name, thread.name, thread.daemon))


def test_shutdown_waits_for_a_provider_within_the_timeout_on_a_daemon_thread(home: HermesHome) -> None:
    log: list = []
    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[SlowShutdown("builtin", log, seconds=0.3)])
    manager.start("s1")
    manager.shutdown(timeout=3)
    assert log[-1] == ("shutdown", "builtin", "hermes-memory-shutdown", True)


def test_a_hanging_shutdown_is_abandoned_with_a_warning(home: HermesHome, caplog) -> None:
    release, log = threading.Event(), []
    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[SlowShutdown("hangs", log, until=release)])
    manager.start("s1")
    with caplog.at_level(logging.WARNING, logger="hermes"):
        manager.shutdown(timeout=0.05)  # below the grace period: each provider still gets 0.1 s
    release.set()
    assert warnings(caplog) == ["memory: shutdown of memory provider 'hangs' did not finish within 0.1 s; moving on"]


def test_a_failing_provider_call_is_logged_with_its_label_and_traceback(home: HermesHome, caplog) -> None:
    class Broken(Plain):
        def shutdown(self) -> None:
            raise RuntimeError("no clean exit")

    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[Broken("broken")])
    manager.start("s1")
    with caplog.at_level(logging.DEBUG, logger="hermes"):
        manager.shutdown()
    assert warnings(caplog) == ["memory: shutdown of memory provider 'broken' failed: RuntimeError: no clean exit"]
    (debug,) = [r for r in caplog.records if r.name == MANAGER_LOG and r.levelno == logging.DEBUG]
    assert debug.getMessage() == "memory failure" and str(debug.exc_info[1]) == "no clean exit"


# --- the snapshot and the tools -------------------------------------------------------------------


class Blocks(Plain):
    def __init__(self, name: str, block: Any) -> None:
        super().__init__(name)
        self.block = block

    def system_prompt_block(self) -> str | None:
        if isinstance(self.block, Exception):
            raise self.block
        return self.block


def test_snapshot_joins_stripped_blocks_and_skips_failures(home: HermesHome, caplog) -> None:
    host = PluginHost(load_plugins="")
    providers = [Blocks("builtin", "  ## Memory\nuses uv \n"), Blocks("recorder", "## Recorder")]
    manager = MemoryManager(host, home, config(), providers=providers)
    manager.start("s1")
    assert manager.system_prompt_block() == "## Memory\nuses uv\n\n## Recorder"
    manager.shutdown()
    broken = MemoryManager(host, home, config(), providers=[Blocks("builtin", RuntimeError("unreadable")), Blocks("empty", " \n")])
    with caplog.at_level(logging.WARNING, logger="hermes"):
        broken.start("s1")
    assert broken.system_prompt_block() is None
    assert warnings(caplog) == ["memory: system_prompt_block of 'builtin' failed: RuntimeError: unreadable"]
    broken.shutdown()


class Offers(Plain):
    def __init__(self, name: str, schemas: Any) -> None:
        super().__init__(name)
        self.schemas = schemas

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        if isinstance(self.schemas, Exception):
            raise self.schemas
        return self.schemas


FULL_PARAMETERS = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def test_tools_take_names_descriptions_and_parameters_and_refuse_the_rest(home: HermesHome, caplog) -> None:
    schemas = [
        "not a schema", {"type": "function", "function": "not a function"}, {"description": "no name"},
        {"name": "taken"}, {"type": "function", "function": {"name": "dup", "description": "first"}},
        {"name": "dup", "description": "second"}, {"name": "bare"},
        {"name": "full", "description": "search notes", "parameters": FULL_PARAMETERS},
    ]  # fmt: skip
    providers = [Offers("builtin", RuntimeError("no schemas")), Offers("odd", schemas)]
    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=providers)
    with caplog.at_level(logging.WARNING, logger="hermes"):
        tools = manager.tools({"taken"})
    assert [(t.name, t.description, t.parameters, t.toolset) for t in tools] == [
        ("dup", "first", {"type": "object", "properties": {}}, "memory"),
        ("bare", "", {"type": "object", "properties": {}}, "memory"),
        ("full", "search notes", FULL_PARAMETERS, "memory"),
    ]
    assert warnings(caplog) == [
        "memory: get_tool_schemas of 'builtin' failed: RuntimeError: no schemas",
        *["memory provider 'odd' offered a tool without a name; ignored"] * 3,
        "memory provider 'odd': tool 'taken' refused, it would shadow a tool of that name",
        "memory provider 'odd': tool 'dup' refused, it would shadow a tool of that name",
    ]


# --- the background worker ------------------------------------------------------------------------


class TakesMessages(Plain):
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str, messages: Any = None) -> None:
        self.log.append(("sync_turn", self.name, session_id, messages))


class TakesAnything(Plain):
    def sync_turn(self, *args: Any, **kwargs: Any) -> None:
        self.log.append(("sync_turn", self.name, args, kwargs))


class _Unreadable:
    """A callable whose signature inspect cannot read (as some C-implemented callables)."""

    __signature__ = "unreadable"

    def __init__(self, log: list) -> None:
        self.log = log

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.log.append(("sync_turn", "opaque", args, kwargs))


def test_sync_turn_hands_messages_only_to_providers_that_take_them(home: HermesHome) -> None:
    log: list = []
    opaque = Plain("opaque", log)
    opaque.sync_turn = _Unreadable(log)  # type: ignore[method-assign]
    providers = [Plain("builtin", log), TakesMessages("explicit", log), TakesAnything("kwargs", log), opaque]
    for provider in providers:
        gate = threading.Event()
        manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[provider])
        manager.start("s1")
        manager._worker.submit(lambda: gate.wait(5), "gate")  # hold the queue: the agent keeps appending meanwhile
        messages = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
        manager.sync_turn("u", "a", messages=messages)
        messages.append({"role": "user", "content": "next"})
        manager.sync_turn("u2", "a2", "s2")
        gate.set()
        manager.shutdown()
    turn = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    assert [e for e in log if e[0] == "sync_turn"] == [
        ("sync_turn", "builtin", "u", "a", "s1"),
        ("sync_turn", "builtin", "u2", "a2", "s2"),
        ("sync_turn", "explicit", "s1", turn),
        ("sync_turn", "explicit", "s2", None),
        ("sync_turn", "kwargs", ("u", "a", "s1"), {"messages": turn}),
        ("sync_turn", "kwargs", ("u2", "a2", "s2"), {}),
        ("sync_turn", "opaque", ("u", "a", "s1"), {}),
        ("sync_turn", "opaque", ("u2", "a2", "s2"), {}),
    ]


def test_session_ids_for_queued_work(home: HermesHome) -> None:
    log: list = []
    idle = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[Plain(log=log)])
    idle.sync_turn("u", "a")  # never started: no session yet
    idle.queue_prefetch("q")
    idle.shutdown()
    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[Plain(log=log)])
    manager.start("s1")
    manager.queue_prefetch("q1")
    manager.queue_prefetch("q2", "s9")
    manager.switch_session("s3")
    manager.sync_turn("u", "a")
    manager.shutdown()
    assert [e for e in log if e[0] != "initialize"] == [
        ("sync_turn", "builtin", "u", "a", ""), ("queue_prefetch", "builtin", "q", ""),
        ("queue_prefetch", "builtin", "q1", "s1"), ("queue_prefetch", "builtin", "q2", "s9"),
        ("sync_turn", "builtin", "u", "a", "s3"),
    ]  # fmt: skip


def test_a_failing_queued_job_is_logged_with_its_label(home: HermesHome, caplog) -> None:
    class Broken(Plain):
        def sync_turn(self, *args: Any) -> None:
            raise RuntimeError("disk full")

        def queue_prefetch(self, query: str, session_id: str) -> None:
            raise RuntimeError("backend down")

    manager = MemoryManager(PluginHost(load_plugins=""), home, config(), providers=[Broken("broken")])
    manager.start("s1")
    with caplog.at_level(logging.WARNING, logger="hermes"):
        manager.sync_turn("u", "a")
        manager.queue_prefetch("q")
        manager.shutdown()
    assert warnings(caplog, WORKER_LOG) == [
        "memory sync_turn of 'broken' failed: RuntimeError: disk full",
        "memory queue_prefetch of 'broken' failed: RuntimeError: backend down",
    ]


# --- status --------------------------------------------------------------------------------------


class Described(Plain):
    def __init__(self, name: str, available: Any, describe: Any) -> None:
        super().__init__(name)
        self.available, self.description = available, describe
        self.described_with: tuple[Any, Any] | None = None

    def is_available(self) -> bool:
        if isinstance(self.available, Exception):
            raise self.available
        return self.available

    def describe(self, hermes_home: Any, config: Any) -> dict[str, Any]:
        self.described_with = (hermes_home, config)
        if isinstance(self.description, Exception):
            raise self.description
        return self.description


def test_status_rows(home: HermesHome, caplog) -> None:
    cfg = config()
    builtin = Described("builtin", True, {"summary": "2 entries", "files": {}})
    external = Described("vault", RuntimeError("socket closed"), RuntimeError("no route"))
    manager = MemoryManager(PluginHost(load_plugins=""), home, cfg, providers=[builtin, external])
    manager.skipped["gone"] = "its is_available() returned False"
    with caplog.at_level(logging.WARNING, logger="hermes"):
        rows = manager.status()
    assert rows == [
        {"name": "builtin", "kind": "builtin", "available": True, "error": None, "summary": "2 entries", "files": {}},
        {"name": "vault", "kind": "external", "available": False, "error": None},
        {"name": "gone", "kind": "external", "available": False, "error": "its is_available() returned False"},
    ]
    assert builtin.described_with == (home, cfg) and external.described_with == (home, cfg)
    assert warnings(caplog) == [
        "memory: is_available of 'vault' failed: RuntimeError: socket closed",
        "memory: describe of 'vault' failed: RuntimeError: no route",
    ]
