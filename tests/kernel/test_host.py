"""PluginHost: slot drivers through stevedore, hooks through pluggy, filters and failures."""

from __future__ import annotations

import pytest

from hermes.kernel import PluginHost, PluginLoadError, PluginNotFoundError
from hermes.kernel.errors import HermesError

ENGINES = "hermes.context_engines"

def third_party(names: list[str]) -> list[str]:
    """Drop hermes-kernel's own engines (always loadable) from a list of names."""
    builtin = set(PluginHost(load_plugins="").available(ENGINES))
    return [n for n in names if n not in builtin]


ENGINE_MODULE = """
class Tiny:
    name = "tiny"

class Other:
    name = "other"
"""


@pytest.fixture
def engines(fake_dists):
    fake_dists.add(
        "acme-engines",
        {ENGINES: {"tiny": "acme_engines:Tiny", "other": "acme_engines:Other"}},
        {"acme_engines": ENGINE_MODULE},
        version="2.3.4",
    )
    return fake_dists


def test_driver_loads_the_named_implementation(engines) -> None:
    host = PluginHost(load_plugins=None)
    cls = host.driver(ENGINES, "tiny")
    assert cls.__name__ == "Tiny" and cls.name == "tiny"


def test_unknown_driver_names_group_name_and_available(engines) -> None:
    host = PluginHost(load_plugins=None)
    with pytest.raises(PluginNotFoundError) as err:
        host.driver(ENGINES, "huge")
    message = str(err.value)
    assert "hermes.context_engines" in message and "'huge'" in message
    assert "other, tiny" in message


def test_broken_driver_raises_one_clear_error_and_is_recorded(fake_dists) -> None:
    fake_dists.add(
        "broken-engine",
        {ENGINES: {"broken": "broken_engine:Engine"}},
        {"broken_engine": "import not_a_real_module_xyz\n"},
    )
    host = PluginHost(load_plugins=None)
    with pytest.raises(PluginLoadError) as err:
        host.driver(ENGINES, "broken")
    assert "ModuleNotFoundError" in str(err.value) and "not_a_real_module_xyz" in str(err.value)
    assert (ENGINES, "broken") in host.load_failures


def test_same_name_from_two_distributions_is_a_clear_error(engines) -> None:
    engines.add("rival", {ENGINES: {"tiny": "rival_mod:Tiny"}}, {"rival_mod": "class Tiny: pass\n"})
    host = PluginHost(load_plugins=None)
    with pytest.raises(PluginLoadError, match="several distributions"):
        host.driver(ENGINES, "tiny")


def test_load_plugins_env_filters_third_party(engines, monkeypatch) -> None:
    assert third_party(PluginHost(load_plugins="").available(ENGINES)) == []
    assert third_party(PluginHost(load_plugins="someone-else").available(ENGINES)) == []
    assert third_party(PluginHost(load_plugins="Acme_Engines").available(ENGINES)) == ["other", "tiny"]
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "acme-engines,someone-else")
    assert third_party(PluginHost().available(ENGINES)) == ["other", "tiny"]
    monkeypatch.delenv("HERMES_LOAD_PLUGINS")
    assert third_party(PluginHost().available(ENGINES)) == ["other", "tiny"]
    with pytest.raises(PluginNotFoundError):
        PluginHost(load_plugins="").driver(ENGINES, "tiny")


def test_disabled_by_entry_point_or_distribution_name(engines) -> None:
    assert third_party(PluginHost(load_plugins=None, disabled=["tiny"]).available(ENGINES)) == ["other"]
    assert third_party(PluginHost(load_plugins=None, disabled=["acme-engines"]).available(ENGINES)) == []
    rows = PluginHost(load_plugins=None, disabled=["tiny"]).installed(ENGINES, include_builtin=False)
    assert [(r.name, r.enabled) for r in rows] == [("other", True), ("tiny", False)]


def test_installed_lists_distribution_version_and_errors(engines) -> None:
    engines.add("bad-tool", {"hermes.tools": {"bad": "bad_tool_mod:TOOL"}}, {"bad_tool_mod": "raise ValueError('nope')\n"})
    host = PluginHost(load_plugins=None)
    rows = {(r.group, r.name): r for r in host.installed(check=True)}
    tiny = rows[(ENGINES, "tiny")]
    assert (tiny.distribution, tiny.version, tiny.builtin, tiny.error) == ("acme-engines", "2.3.4", False, None)
    assert rows[("hermes.tools", "bad")].error == "ValueError: nope"
    assert all(not r.builtin for r in host.installed(include_builtin=False))


def test_extensions_load_named_in_order_and_skip_broken(engines) -> None:
    engines.add("flaky", {ENGINES: {"flaky": "flaky_mod:X"}}, {"flaky_mod": "raise ImportError('missing dep')\n"})
    host = PluginHost(load_plugins=None)
    assert [p.name for p in host.extensions(ENGINES, ["tiny", "other"])] == ["tiny", "other"]
    everything = [p for p in host.extensions(ENGINES) if p.distribution != "hermes-kernel"]
    assert sorted(p.name for p in everything) == ["other", "tiny"]
    assert {p.distribution for p in everything} == {"acme-engines"}
    assert host.load_failures[(ENGINES, "flaky")] == "ImportError: missing dep"
    with pytest.raises(PluginNotFoundError):
        host.extensions(ENGINES, ["tiny", "nope"])


HOOK_MODULE = """
from hermes.kernel import hookimpl

@hookimpl
def prefetch(session_id, query):
    return "from good: " + query
"""


def test_load_plugins_registers_modules_and_records_failures(fake_dists) -> None:
    fake_dists.add(
        "good-plugin",
        {"hermes.plugins": {"good": "good_plugin"}},
        {"good_plugin": HOOK_MODULE},
    )
    fake_dists.add(
        "typo-plugin",
        {"hermes.plugins": {"typo": "typo_plugin"}},
        {"typo_plugin": "from hermes.kernel import hookimpl\n\n@hookimpl\ndef prefetch(session_id, qeury):\n    return 'x'\n"},
    )
    fake_dists.add("crash-plugin", {"hermes.plugins": {"crash": "crash_plugin"}}, {"crash_plugin": "1/0\n"})
    host = PluginHost(load_plugins=None)
    host.load_plugins()
    host.load_plugins()  # idempotent
    assert host.call("prefetch", session_id="s", query="q") == ["from good: q"]
    assert "qeury" in host.load_failures[("hermes.plugins", "typo")]
    assert host.load_failures[("hermes.plugins", "crash")] == "ZeroDivisionError: division by zero"
    # The mismatched hook alone is skipped (one warning); the plugin itself still registers.
    assert host.pm.has_plugin("good") and host.pm.has_plugin("typo")
    assert [(m.plugin, m.hook) for m in host.hook_mismatches] == [("typo", "prefetch")]


def test_register_live_object_and_double_registration() -> None:
    from hermes.kernel import hookimpl

    class Engine:
        @hookimpl
        def on_pre_compress(self, session_id, messages):
            return "keep"

    host = PluginHost(load_plugins="")
    engine = Engine()
    host.register(engine, name="engine")
    assert host.call("on_pre_compress", session_id="s", messages=[]) == ["keep"]
    with pytest.raises(HermesError, match="already registered"):
        host.register(engine, name="engine")
    host.unregister(engine)
    host.unregister(engine)  # harmless
    assert host.call("on_pre_compress", session_id="s", messages=[]) == []


def test_call_checks_hook_name_and_arguments() -> None:
    host = PluginHost(load_plugins="")
    # With no listener there is no manager yet: nothing runs (tests/kernel/test_hook_calls.py
    # checks every call site of the code against the specs instead).
    assert host.call("on_tea_time", cup=1) == []
    host.register(object(), name="listener")  # the manager exists from now on
    with pytest.raises(HermesError, match="unknown hook"):
        host.call("on_tea_time", cup=1)
    with pytest.raises(TypeError, match="takes"):
        host.call("prefetch", session_id="s")


def test_failures_are_bounded_and_described() -> None:
    from hermes.kernel import hookimpl

    class Raiser:
        @hookimpl
        def on_turn_start(self, session_id, turn, message):
            raise KeyError(message)

    host = PluginHost(load_plugins="")
    host.register(Raiser(), name="raiser")
    for turn in range(250):
        host.call("on_turn_start", session_id="s", turn=turn, message="m")
    assert len(host.hook_failures) == 200
    assert host.hook_failures[-1].plugin == "raiser"
    assert host.hook_failures[-1].error == "KeyError: 'm'"


def test_overriding_a_contract_hook_method_keeps_it_a_listener() -> None:
    from hermes.kernel import ContextEngine

    seen = []

    class Engine(ContextEngine):
        name = "plain"

        def update_from_response(self, usage):
            pass

        def should_compress(self, prompt_tokens=None):
            return False

        def compress(self, messages, current_tokens=None, focus_topic=None):
            return messages

        def on_session_end(self, session_id, messages, reason):  # no @hookimpl here
            seen.append(reason)

    host = PluginHost(load_plugins="")
    host.register(Engine())
    host.call("on_session_end", session_id="s", messages=[], reason="user_exit")
    assert seen == ["user_exit"]


def test_a_contract_override_with_the_wrong_signature_is_skipped_alone(caplog: pytest.LogCaptureFixture) -> None:
    """A memory provider overriding on_turn_start with Hermes's signature: one warning, its other hooks still fire."""
    from hermes.kernel import MemoryProvider

    class Mixed(MemoryProvider):
        def __init__(self) -> None:
            self.ended: list[str] = []

        def is_available(self) -> bool:
            return True

        def initialize(self, session_id: str, **kwargs: object) -> None:
            pass

        def on_turn_start(self, turn_number, message, **kwargs):  # type: ignore[override]
            raise AssertionError("never called with the kernel's arguments")

        def on_session_end(self, session_id, messages, reason):
            self.ended.append(reason)

    host = PluginHost(load_plugins="")
    provider = Mixed()
    with caplog.at_level("WARNING", logger="hermes.kernel.host"):
        host.register(provider, name="memory:mixed@1")
    host.call("on_turn_start", session_id="s", turn=1, message="hi")
    host.call("on_session_end", session_id="s", messages=[], reason="user_exit")
    assert provider.ended == ["user_exit"]
    assert [r.getMessage() for r in caplog.records] == [
        "plugin 'memory:mixed': hook on_turn_start skipped: it takes (turn_number, message) but the spec gives "
        "(session_id, turn, message); turn_number is not in the spec; its other hooks still work"
    ]
