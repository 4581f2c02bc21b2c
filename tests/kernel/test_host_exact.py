"""PluginHost to the letter: the lines a user reads, the filters, the defaults and the order of things.

Written against the mutants that survived tests/kernel/test_host.py (issue 20): each test pins
one behaviour exactly, so a changed message, a flipped default or a ``break`` for a
``continue`` fails here.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

import pytest

from hermes.kernel import Config, PluginHost, PluginLoadError, PluginNotFoundError, hookimpl
from hermes.kernel.errors import HermesError
from tests.kernel.test_host import ENGINE_MODULE, engines  # noqa: F401  # the fixture: acme-engines 2.3.4, tiny then other

ENGINES = "hermes.context_engines"
MEMORY = "hermes.memory_providers"
PLUGINS = "hermes.plugins"
HOST_LOG = "hermes.kernel.host"
BUILTIN_ENGINES = ["compressor", "masking"]



def host_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == HOST_LOG]


def host_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in host_records(caplog)]


def third_party(rows) -> list[tuple[str, str]]:
    return [(r.name, r.distribution) for r in rows if r.distribution != "hermes-kernel"]


# --- discovery and filters -----------------------------------------------------------


def test_an_unknown_group_names_every_known_one() -> None:
    with pytest.raises(HermesError) as err:
        PluginHost(load_plugins="").available("hermes.engines")
    assert str(err.value) == (
        "unknown entry-point group 'hermes.engines'; known: hermes.context_engines, hermes.memory_providers, "
        "hermes.model_providers, hermes.credential_strategies, hermes.tools, hermes.skills, "
        "hermes.session_stores, hermes.commands, hermes.plugins"
    )


def test_load_plugins_env_that_names_someone_else_hides_third_party(engines, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "someone-else")
    assert PluginHost().available(ENGINES) == BUILTIN_ENGINES
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "acme-engines")
    assert PluginHost().available(ENGINES) == [*BUILTIN_ENGINES, "other", "tiny"]


def test_from_config_honours_plugins_disabled_and_the_environment(engines, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "acme-engines")
    host = PluginHost.from_config(Config({"plugins": {"disabled": ["tiny", "masking"]}}))
    assert host.available(ENGINES) == ["compressor", "other"]


def test_disabled_by_the_distribution_name_as_written_or_normalised(fake_dists) -> None:
    fake_dists.add("Acme_Engines", {ENGINES: {"tiny": "acme_engines:Tiny"}}, {"acme_engines": ENGINE_MODULE})
    assert PluginHost(load_plugins=None, disabled=["Acme_Engines"]).available(ENGINES) == BUILTIN_ENGINES
    assert PluginHost(load_plugins=None, disabled=["acme-engines"]).available(ENGINES) == BUILTIN_ENGINES
    assert PluginHost(load_plugins=None, disabled=["tiny"]).available(ENGINES) == BUILTIN_ENGINES
    assert PluginHost(load_plugins=None, disabled=["acme"]).available(ENGINES) == [*BUILTIN_ENGINES, "tiny"]


def test_a_distribution_found_twice_on_sys_path_is_listed_once(engines, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(engines.root))  # the same folder twice, as a doubled PYTHONPATH gives
    host = PluginHost(load_plugins=None)
    assert third_party(host.installed(ENGINES)) == [("other", "acme-engines"), ("tiny", "acme-engines")]
    assert host.driver(ENGINES, "tiny").__name__ == "Tiny"  # not "installed by several distributions"


def test_refresh_sees_a_distribution_installed_after_the_first_look(fake_dists) -> None:
    host = PluginHost(load_plugins=None)
    assert host.available(ENGINES) == BUILTIN_ENGINES
    fake_dists.add("late-engine", {ENGINES: {"late": "late_engine:Late"}}, {"late_engine": "class Late:\n    pass\n"})
    assert host.available(ENGINES) == BUILTIN_ENGINES  # the index is read once
    host.refresh()
    assert host.available(ENGINES) == ["compressor", "late", "masking"]
    assert host.driver(ENGINES, "late").__name__ == "Late"


def test_provider_folders_join_the_memory_slot_without_shadowing_an_installed_name(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    for name in ("builtin", "recall"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("class Provider(MemoryProvider):\n    pass\n", encoding="utf-8")
    asked = []

    def folders() -> list[Path]:
        asked.append(1)
        return [root]

    host = PluginHost(load_plugins=None, plugin_dirs=folders)
    rows = host.installed(MEMORY)
    assert [(r.name, r.distribution, r.kind, r.value) for r in rows] == [
        ("builtin", "hermes-kernel", "builtin", "hermes.memory_providers.builtin:BuiltinMemoryProvider"),
        ("recall", "recall", "folder", str(root / "recall")),
    ]
    assert host.available(MEMORY) == ["builtin", "recall"]
    assert asked == [1]  # the folders are asked for once, when the index is built


# --- installed() -----------------------------------------------------------------------


def test_installed_defaults_to_one_group_with_builtins_and_permitted_entries_only(engines) -> None:
    # acme-engines comes first on sys.path and is not permitted: skipped, and the built-ins after it still listed.
    host = PluginHost(load_plugins="")
    rows = host.installed(ENGINES)
    assert [(r.group, r.name, r.distribution, r.builtin, r.kind) for r in rows] == [
        (ENGINES, "compressor", "hermes-kernel", True, "builtin"),
        (ENGINES, "masking", "hermes-kernel", True, "builtin"),
    ]
    assert host.installed(ENGINES, include_builtin=False) == []
    every = host.installed(ENGINES, include_builtin=False, everything=True)
    assert [(r.name, r.value, r.distribution, r.version, r.kind, r.enabled) for r in every] == [
        ("other", "acme_engines:Other", "acme-engines", "2.3.4", "package", True),
        ("tiny", "acme_engines:Tiny", "acme-engines", "2.3.4", "package", True),
    ]


def test_installed_imports_nothing_unless_asked_and_then_only_enabled_slot_entries(engines) -> None:
    engines.add("bad-tool", {"hermes.tools": {"bad": "bad_tool:TOOL"}}, {"bad_tool": "raise ValueError('nope')\n"})
    engines.add("bad-off", {"hermes.tools": {"off": "bad_off:TOOL"}}, {"bad_off": "raise ValueError('off')\n"})
    engines.add("bad-hooks", {PLUGINS: {"hooks": "bad_hooks"}}, {"bad_hooks": "raise ValueError('hooks')\n"})
    host = PluginHost(load_plugins=None, disabled=["off"])
    assert {r.name: r.error for r in host.installed() if not r.builtin} == {
        "bad": None, "hooks": None, "off": None, "other": None, "tiny": None,
    }
    assert host.load_failures == {}
    checked = {r.name: (r.enabled, r.error) for r in host.installed(check=True, include_builtin=False)}
    assert checked == {
        "bad": (True, "ValueError: nope"), "hooks": (True, None), "off": (False, None),
        "other": (True, None), "tiny": (True, None),
    }
    assert list(host.load_failures) == [("hermes.tools", "bad")]  # hermes.plugins errors come from load_plugins


def test_installed_orders_by_group_name_then_distribution(engines) -> None:
    # zeta's entry point value sorts before acme's: the order is by distribution, not by value.
    engines.add("zeta", {ENGINES: {"tiny": "aaa_zeta:Tiny"}}, {"aaa_zeta": "class Tiny:\n    pass\n"})
    rows = PluginHost(load_plugins=None).installed(ENGINES, include_builtin=False)
    assert [(r.name, r.distribution, r.value) for r in rows] == [
        ("other", "acme-engines", "acme_engines:Other"),
        ("tiny", "acme-engines", "acme_engines:Tiny"),
        ("tiny", "zeta", "aaa_zeta:Tiny"),
    ]


# --- driver(), implementations(), extensions() -----------------------------------------


def test_one_name_from_two_distributions_names_both(engines) -> None:
    engines.add("zeta", {ENGINES: {"tiny": "aaa_zeta:Tiny"}}, {"aaa_zeta": "class Tiny:\n    pass\n"})
    with pytest.raises(PluginLoadError) as err:
        PluginHost(load_plugins=None).driver(ENGINES, "tiny")
    assert str(err.value) == (
        "'hermes.context_engines' plugin 'tiny' failed to load: "
        "installed by several distributions (acme-engines, zeta); remove one"
    )


def test_a_broken_driver_is_one_error_one_warning_and_a_debug_traceback(fake_dists, caplog) -> None:
    fake_dists.add("broken-engine", {ENGINES: {"broken": "broken_engine:Engine"}}, {"broken_engine": "import no_such_mod_xyz\n"})
    host = PluginHost(load_plugins=None)
    with caplog.at_level(logging.DEBUG, logger=HOST_LOG), pytest.raises(PluginLoadError) as err:
        host.driver(ENGINES, "broken")
    reason = "ModuleNotFoundError: No module named 'no_such_mod_xyz'"
    assert (err.value.group, err.value.name, err.value.reason) == (ENGINES, "broken", reason)
    assert str(err.value) == f"'hermes.context_engines' plugin 'broken' failed to load: {reason}"
    assert host_lines(caplog) == [
        ("WARNING", f"could not load hermes.context_engines plugin 'broken': {reason}"),
        ("DEBUG", "load failure of hermes.context_engines:broken"),
    ]
    assert isinstance(host_records(caplog)[-1].exc_info[1], ModuleNotFoundError)
    # Fixed in place (a reinstall): the next load succeeds and the old failure is forgotten.
    (fake_dists.root / "broken_engine.py").write_text("class Engine:\n    fixed = True\n", encoding="utf-8")
    importlib.invalidate_caches()
    assert host.driver(ENGINES, "broken").fixed is True
    assert host.load_failures == {}


def test_implementations_import_each_allowed_entry_and_skip_the_broken(engines) -> None:
    engines.add("flaky", {ENGINES: {"flaky": "flaky_mod:X"}}, {"flaky_mod": "raise ImportError('missing dep')\n"})
    host = PluginHost(load_plugins="acme-engines,flaky", disabled=["other"])
    found = [(name, obj.name) for name, obj in host.implementations(ENGINES) if name not in BUILTIN_ENGINES]
    assert found == [("tiny", "tiny")]
    assert host.load_failures == {(ENGINES, "flaky"): "ImportError: missing dep"}


def test_extensions_follow_the_order_asked_for_and_record_a_broken_one(engines) -> None:
    engines.add("flaky", {ENGINES: {"flaky": "flaky_mod:X"}}, {"flaky_mod": "raise ImportError('missing dep')\n"})
    host = PluginHost(load_plugins=None)
    loaded = host.extensions(ENGINES, ["other", "flaky", "tiny"])  # the reverse of their order on disk
    assert [(p.name, p.distribution, p.obj.name) for p in loaded] == [
        ("other", "acme-engines", "other"), ("tiny", "acme-engines", "tiny"),
    ]
    assert host.load_failures == {(ENGINES, "flaky"): "ImportError: missing dep"}
    with pytest.raises(PluginNotFoundError) as err:
        host.extensions(ENGINES, ["tiny", "nope"])
    assert (err.value.group, err.value.name) == (ENGINES, "nope")
    assert str(err.value) == (
        "no 'hermes.context_engines' plugin named 'nope'; available: compressor, flaky, masking, other, tiny "
        "(see `hermes plugin list --all`)"
    )


# --- load_plugins() ------------------------------------------------------------------------

GOOD_HOOKS = """
from hermes.kernel import hookimpl

@hookimpl
def prefetch(session_id, query):
    return "{name}: " + query
"""

NOT_A_GENERATOR = """
from hermes.kernel import hookimpl

@hookimpl(hookwrapper=True)
def prefetch(session_id, query):
    return None
"""

TWO_MISMATCHES = """
from hermes.kernel import hookimpl

@hookimpl
def prefetch(text):
    return text

@hookimpl
def on_turn_start(session_id, turn_number):
    pass

@hookimpl
def on_memory_write(action, target, content):
    return "still heard"
"""


def test_load_plugins_skips_disabled_records_failures_and_loads_the_rest_once(fake_dists, caplog) -> None:
    # One distribution, so the entries keep this order: a disabled one, one that fails to register,
    # one with two mismatched hooks, two good ones (the last one's failures must not include mixed's).
    fake_dists.add(
        "pack",
        {PLUGINS: {"off": "pack_off", "wrapper": "pack_wrapper", "mixed": "pack_mixed", "good": "pack_good",
                   "after": "pack_after"}},
        {
            "pack_off": GOOD_HOOKS.format(name="off"),
            "pack_wrapper": NOT_A_GENERATOR,
            "pack_mixed": TWO_MISMATCHES,
            "pack_good": GOOD_HOOKS.format(name="good"),
            "pack_after": GOOD_HOOKS.format(name="after"),
        },
    )
    # Another distribution with a plugin of a name already taken: skipped without a word.
    fake_dists.add("rival", {PLUGINS: {"good": "rival_good"}}, {"rival_good": GOOD_HOOKS.format(name="good")})
    host = PluginHost(load_plugins=None, disabled=["off"])
    with caplog.at_level(logging.WARNING, logger=HOST_LOG):
        host.load_plugins()
        host.load_plugins()  # a second call does nothing
    wrapper_error = host.load_failures.get((PLUGINS, "wrapper"), "")  # pluggy's words, on one line
    assert wrapper_error.startswith("PluginValidationError: Plugin 'wrapper' for hook 'prefetch'; hookimpl definition: ")
    assert wrapper_error.endswith("but function is not a generator function")
    prefetch_mismatch = (
        "it takes (text) but the spec gives (session_id, query); text is not in the spec"
    )
    turn_mismatch = (
        "it takes (session_id, turn_number) but the spec gives (session_id, turn, message); "
        "turn_number is not in the spec"
    )
    assert host.load_failures == {
        (PLUGINS, "wrapper"): wrapper_error,
        (PLUGINS, "mixed"): f"hook on_turn_start skipped: {turn_mismatch}; hook prefetch skipped: {prefetch_mismatch}",
    }
    assert host_lines(caplog) == [
        ("WARNING", f"could not load hermes.plugins plugin 'wrapper': {wrapper_error}"),
        ("WARNING", f"plugin 'mixed': hook on_turn_start skipped: {turn_mismatch}; its other hooks still work"),
        ("WARNING", f"plugin 'mixed': hook prefetch skipped: {prefetch_mismatch}; its other hooks still work"),
    ]
    assert not host.pm.has_plugin("off") and not host.pm.has_plugin("wrapper")
    assert host.call("prefetch", session_id="s", query="q") == ["after: q", "good: q"]
    assert host.call("on_memory_write", action="add", target="memory", content="x") == ["still heard"]


# --- hooks -------------------------------------------------------------------------------------


class TwoWrongArgs:
    @hookimpl
    def on_turn_start(self, session_id, turn_number, text):
        raise AssertionError("never called")

    @hookimpl
    def prefetch(self, query):
        return "heard " + query


TWO_WRONG = (
    "hook on_turn_start skipped: it takes (session_id, turn_number, text) but the spec gives "
    "(session_id, turn, message); turn_number, text are not in the spec; its other hooks still work"
)


@pytest.mark.parametrize(
    ("name", "shown"),
    [("memory:mem0@7f3a", "memory:mem0"), ("memory:a@b@7f3a", "memory:a"), (None, "TwoWrongArgs")],
)
def test_a_mismatch_warning_names_the_plugin_without_its_instance_suffix(name, shown, caplog) -> None:
    host = PluginHost(load_plugins="")
    with caplog.at_level(logging.WARNING, logger=HOST_LOG):
        registered = host.register(TwoWrongArgs(), name=name)
    assert host_lines(caplog) == [("WARNING", f"plugin {shown!r}: {TWO_WRONG}")]
    assert [tuple(m) for m in host.hook_mismatches] == [(shown, "on_turn_start", TWO_WRONG.split(": ", 1)[1][: -len("; its other hooks still work")])]
    assert host.call("prefetch", session_id="s", query="q") == ["heard q"]
    if name is not None:
        assert registered == name


def test_a_mismatch_outside_register_names_the_object_type() -> None:
    """pluggy's parse_hookimpl_opts is public; outside register() no earlier plugin's name leaks into it."""
    host = PluginHost(load_plugins="")
    assert host.pm.parse_hookimpl_opts(TwoWrongArgs(), "on_turn_start") is None
    host.register(TwoWrongArgs(), name="first@1")
    assert host.pm.parse_hookimpl_opts(TwoWrongArgs(), "on_turn_start") is None
    assert [m.plugin for m in host.hook_mismatches] == ["TwoWrongArgs", "first", "TwoWrongArgs"]


def test_specname_implementations_are_checked_against_the_hook_they_name(caplog) -> None:
    class Renamed:
        @hookimpl(specname="on_session_end")
        def ended(self, session_id, why):
            raise AssertionError("never called")

        @hookimpl(specname="prefetch")
        def recall(self, query):
            return "recalled " + query

    host = PluginHost(load_plugins="")
    host.register(Renamed(), name="renamed")
    assert host.call("prefetch", session_id="s", query="q") == ["recalled q"]
    assert host.call("on_session_end", session_id="s", messages=[], reason="new") == []
    assert [tuple(m) for m in host.hook_mismatches] == [
        ("renamed", "on_session_end",
         "it takes (session_id, why) but the spec gives (session_id, messages, reason); why is not in the spec"),
    ]


def test_an_implementation_of_a_hook_the_kernel_lacks_registers_but_cannot_be_called() -> None:
    class Early:
        @hookimpl
        def on_tea_time(self, cup):
            return cup

        @hookimpl
        def prefetch(self, query):
            return "early"

    host = PluginHost(load_plugins="")
    host.register(Early(), name="early")
    assert host.call("prefetch", session_id="s", query="q") == ["early"]
    with pytest.raises(HermesError) as err:
        host.call("on_tea_time", cup=1)
    assert str(err.value) == "unknown hook 'on_tea_time'"


class Base:
    @hookimpl
    def prefetch(self, session_id, query):
        return "base"


def test_an_override_keeps_its_own_marker_options() -> None:
    class First(Base):
        @hookimpl(tryfirst=True)
        def prefetch(self, session_id, query):
            return "first"

    class Plain:
        @hookimpl
        def prefetch(self, session_id, query):
            return "plain"

    host = PluginHost(load_plugins="")
    host.register(First(), name="first")
    host.register(Plain(), name="plain")  # registered last, so it would run first without tryfirst
    assert host.call("prefetch", session_id="s", query="q") == ["first", "plain"]


def test_an_override_with_a_non_callable_turns_the_hook_off() -> None:
    class Off(Base):
        prefetch = None

    class Inherits(Base):
        pass

    host = PluginHost(load_plugins="")
    host.register(Off(), name="off")
    host.register(Inherits(), name="inherits")
    assert host.call("prefetch", session_id="s", query="q") == ["base"]


def test_a_class_object_with_static_implementations_is_a_listener() -> None:
    class Static:
        @staticmethod
        @hookimpl
        def prefetch(session_id, query):
            return "static " + query

    host = PluginHost(load_plugins="")
    assert host.register(Static, name="static") == "static"
    assert host.call("prefetch", session_id="s", query="q") == ["static q"]


def test_registering_twice_names_the_plugin() -> None:
    class Engine:
        @hookimpl
        def prefetch(self, session_id, query):
            return "e"

    host = PluginHost(load_plugins="")
    named, unnamed = Engine(), Engine()
    host.register(named, name="engine")
    host.register(unnamed)
    with pytest.raises(HermesError) as err:
        host.register(named, name="engine")
    assert str(err.value) == "plugin 'engine' is already registered or blocked"
    with pytest.raises(HermesError) as err:
        host.register(unnamed)
    assert str(err.value) == "plugin 'Engine' is already registered or blocked"


def test_wrappers_are_skipped_with_a_warning_and_the_rest_still_run(caplog) -> None:
    class Old:
        @hookimpl(hookwrapper=True)
        def prefetch(self, session_id, query):
            yield

    class New:
        @hookimpl(wrapper=True)
        def prefetch(self, session_id, query):
            return (yield)

    class Plain:
        @hookimpl
        def prefetch(self, session_id, query):
            return "plain"

    host = PluginHost(load_plugins="")
    for name, obj in (("plain", Plain()), ("old", Old()), ("new", New())):
        host.register(obj, name=name)
    with caplog.at_level(logging.WARNING, logger=HOST_LOG):
        assert host.call("prefetch", session_id="s", query="q") == ["plain"]
    assert host_lines(caplog) == [
        ("WARNING", "hook prefetch: wrapper in 'new' is not supported, skipped"),
        ("WARNING", "hook prefetch: wrapper in 'old' is not supported, skipped"),
    ]


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (ValueError("x" * 300), "ValueError: " + "x" * 300),
        (ValueError("x" * 301), "ValueError: " + "x" * 297 + "..."),
        (ValueError("first line\n\n   second line  \n"), "ValueError: first line; second line"),
        (ValueError(), "ValueError"),
        (ValueError(" \n "), "ValueError"),
    ],
)
def test_a_raising_hook_is_one_capped_line_then_a_debug_traceback(exc, error, caplog) -> None:
    class Raiser:
        @hookimpl
        def on_memory_write(self, action, target, content):
            raise exc

    class Mirror:
        @hookimpl
        def on_memory_write(self, action, target, content):
            return content

    host = PluginHost(load_plugins="")
    host.register(Mirror(), name="mirror")
    host.register(Raiser(), name="raiser")  # runs first
    with caplog.at_level(logging.DEBUG, logger=HOST_LOG):
        assert host.call("on_memory_write", action="add", target="memory", content="x") == ["x"]
    assert list(host.hook_failures) == [("on_memory_write", "raiser", error)]
    assert host_lines(caplog) == [
        ("WARNING", f"hook on_memory_write: plugin 'raiser' raised {error}"),
        ("DEBUG", "hook failure in raiser"),
    ]
    assert host_records(caplog)[-1].exc_info[1] is exc
