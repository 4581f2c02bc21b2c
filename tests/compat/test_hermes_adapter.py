"""The Hermes compatibility layer in-process: stand-ins, translation, signature inspection, loading errors."""

from __future__ import annotations

import os
import sys
import textwrap
import types
from pathlib import Path

import pytest

from hermes.compat.hermes import FeatureUnavailable, HermesProviderAdapter, load_folder_provider
from hermes.compat.hermes.standins import OWNED_ROOTS, ensure
from hermes.kernel import HermesHome, MemoryManager, PluginHost, PluginLoadError, load_config

RECORDING = '''
import sys
from agent.memory_provider import MemoryProvider

LOG = []


def owned():
    return sorted(k for k in sys.modules if k.split(".")[0] in {"agent", "tools", "utils", "plugins", "hermes_cli", "hermes_constants"})


class Recorder(MemoryProvider):
    name = "recorder"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        import os
        import sqlite3
        from hermes_state import apply_wal_with_fallback

        conn = sqlite3.connect(os.path.join(kwargs["hermes_home"], "recorder.db"))
        wal = apply_wal_with_fallback(conn, db_label="recorder.db")
        conn.close()
        LOG.append(("initialize", session_id, {**kwargs, "wal": wal}))

    def get_tool_schemas(self):
        return []

    def prefetch(self, query, *, session_id=""):
        from utils import is_truthy_value  # a lazy import of a host module, at call time
        from plugins.memory.recorder import helper  # its own submodule, by its absolute name
        LOG.append(("prefetch", query, session_id, owned(), is_truthy_value("yes"), helper.VALUE))
        return ""

    def on_session_switch(self, new_session_id, *, parent_session_id="", reset=False, rewound=False, **kwargs):
        LOG.append(("switch", new_session_id, parent_session_id, reset, rewound))

    def on_pre_compress(self, messages):
        return f"kept {len(messages)}"

    def on_delegation(self, task, result, *, child_session_id="", **kwargs):
        LOG.append(("delegation", task, result, child_session_id))

    def on_memory_write(self, action, target, content):  # an older signature: no metadata
        LOG.append(("write", action, target, content))
'''


def make_folder(root: Path, name: str, source: str, **extra: str) -> Path:
    folder = root / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent(source), encoding="utf-8")
    for file, text in extra.items():
        (folder / file).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


@pytest.fixture
def home(hermes_home: Path) -> HermesHome:
    return HermesHome(root=hermes_home, profile="default").ensure()


def owned_modules() -> list[str]:
    return sorted(k for k in sys.modules if k.split(".")[0] in OWNED_ROOTS)


def test_stand_ins_exist_only_while_the_provider_loads_and_runs(home: HermesHome, monkeypatch: pytest.MonkeyPatch) -> None:
    foreign = types.ModuleType("utils")  # some other library's top-level `utils`
    monkeypatch.setitem(sys.modules, "utils", foreign)
    folder = make_folder(home.path, "recorder", RECORDING, **{"helper.py": "VALUE = 42\n"})
    provider = load_folder_provider(folder)(home=home)
    assert owned_modules() == ["utils"] and sys.modules["utils"] is foreign
    provider.initialize("s1", hermes_home=home, platform="cli", agent_context="review")
    assert provider.prefetch("hello", "s1") is None  # "" from Hermes is "nothing" to the kernel
    assert type(provider.inner).__module__ not in sys.modules  # nor is the provider's own module
    (init, prefetch) = type(provider.inner).is_available.__globals__["LOG"]
    assert init == ("initialize", "s1", {"hermes_home": str(home.path), "platform": "cli", "agent_context": "flush",
                                         "agent_identity": "default", "wal": True})  # fmt: skip
    name, query, session, during, truthy, helper = prefetch
    assert (name, query, session, truthy, helper) == ("prefetch", "hello", "s1", True, 42)
    assert {"agent.memory_provider", "utils", "plugins.memory.recorder", "plugins.memory.recorder.helper"} <= set(during)
    assert owned_modules() == ["utils"] and sys.modules["utils"] is foreign


def test_hooks_are_translated_both_ways(home: HermesHome) -> None:
    host = PluginHost(load_plugins="")
    provider = load_folder_provider(make_folder(home.path, "recorder", RECORDING, **{"helper.py": "VALUE = 1\n"}))(home=home)
    manager = MemoryManager(host, home, providers=[provider])
    manager.start("s1")
    log = type(provider.inner).is_available.__globals__["LOG"]
    host.call("on_session_switch", old_session_id="s1", new_session_id="s2", reason="compression")
    host.call("on_session_switch", old_session_id="s2", new_session_id="s3", reason="new")
    assert host.call("on_pre_compress", session_id="s3", messages=[{"role": "user", "content": "x"}]) == ["kept 1"]
    host.call("on_delegation", parent_session_id="s3", task="count files",
              result={"status": "completed", "summary": "12 files", "session_id": "child-1"})  # fmt: skip
    host.call("on_memory_write", action="add", target="user", content="likes tea")
    manager.shutdown()
    assert log[1:] == [
        ("switch", "s2", "s1", False, False),
        ("switch", "s3", "", True, False),
        ("delegation", "count files", "12 files", "child-1"),
        ("write", "add", "user", "likes tea"),
    ]


def test_lazy_deps_ensure_says_what_to_install_and_never_installs(home: HermesHome, monkeypatch: pytest.MonkeyPatch) -> None:
    make_folder(home.path, "needy", """
        from agent.memory_provider import MemoryProvider
        from tools.lazy_deps import ensure

        class Needy(MemoryProvider):
            name = "needy"

            def is_available(self):
                ensure("memory.honcho")
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []
    """)  # fmt: skip
    host = PluginHost(load_plugins=None, plugin_dirs=[home.plugins_dir])
    config = load_config(home, overrides={"memory.provider": "needy"})
    manager = MemoryManager.from_config(host, config, home)
    assert [p.name for p in manager.providers] == ["builtin"]
    assert "install honcho-ai into hermes's environment" in manager.skipped["needy"]
    with pytest.raises(FeatureUnavailable, match="install the package"):
        ensure("tts.something")


def test_a_folder_without_a_provider_fails_loudly(home: HermesHome) -> None:
    folder = make_folder(home.path, "empty", "from agent.memory_provider import MemoryProvider\nVALUE = 1\n")
    with pytest.raises(PluginLoadError, match="registers no memory provider: define register"):
        load_folder_provider(folder)(home=home)
    assert owned_modules() == []


def test_folder_providers_are_drivers_of_the_memory_slot_but_never_shadow_an_entry_point(home: HermesHome) -> None:
    make_folder(home.path, "builtin", RECORDING)  # the name of an installed entry point: ignored
    make_folder(home.path, "recorder", RECORDING)
    (home.plugins_dir / "notes").mkdir()  # no __init__.py: not a provider
    host = PluginHost(load_plugins=None, plugin_dirs=[home.plugins_dir])
    assert host.available("hermes.memory_providers") == ["builtin", "recorder"]
    rows = {r.name: r for r in host.installed("hermes.memory_providers")}
    assert (rows["builtin"].kind, rows["recorder"].kind) == ("builtin", "folder")
    driver = host.driver("hermes.memory_providers", "recorder")
    assert issubclass(driver, HermesProviderAdapter) and driver.folder == home.plugins_dir / "recorder"
    assert PluginHost(load_plugins="", plugin_dirs=[home.plugins_dir]).available("hermes.memory_providers") == ["builtin"]
    assert PluginHost(load_plugins=None, plugin_dirs=[home.plugins_dir], disabled=["recorder"]).available(
        "hermes.memory_providers"
    ) == ["builtin"]


def test_the_home_reported_at_construction_is_the_active_one(home: HermesHome, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes.kernel import active_home
    from hermes.kernel.home import set_active_home

    other = HermesHome(root=home.root, profile="work")
    (home.root / "profiles" / "work").mkdir(parents=True)
    folder = make_folder(home.path, "early", """
        from agent.memory_provider import MemoryProvider
        from hermes_constants import get_hermes_home

        class Early(MemoryProvider):
            name = "early"

            def __init__(self):
                self.seen = str(get_hermes_home())

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []
    """)  # fmt: skip
    assert active_home() == home  # HERMES_HOME, when nothing set one
    set_active_home(other)
    try:
        provider = load_folder_provider(folder)()
    finally:
        set_active_home(None)
    assert provider.inner.seen == os.fspath(other) == str(other.path)


def test_a_syntax_error_shows_in_plugin_list_without_running_the_folder(home: HermesHome) -> None:
    make_folder(home.path, "broken", "class P(MemoryProvider):\n    open('ran', 'w')\ndef oops(:\n",
                **{"plugin.yaml": "name: broken\nversion: 0.1\n"})
    make_folder(home.path, "sometool", "def register(ctx):\n    ctx.register_tool('x')\n", **{"plugin.yaml": "name: sometool\n"})
    host = PluginHost(load_plugins=None, plugin_dirs=[home.plugins_dir])
    rows = host.installed("hermes.memory_providers", check=True)
    assert "sometool" not in {r.name for r in rows}  # a Hermes plugin folder that is no memory provider
    (row,) = [r for r in rows if r.name == "broken"]
    assert (row.kind, row.version) == ("folder", "0.1")
    assert row.error is not None and "SyntaxError" in row.error and "__init__.py" in row.error
    assert not Path("ran").exists() and owned_modules() == []
