"""One ``test_hook_<name>`` per kernel hook spec (tests/test_docs.py checks they all exist)."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from hermes.kernel import PluginHost, hookimpl
from hermes.kernel.cli import build_app


def make_host(*listeners: object) -> PluginHost:
    host = PluginHost(load_plugins="")
    for listener in listeners:
        host.register(listener)
    return host


class Boom:
    """A listener that raises from every hook."""

    @hookimpl
    def on_turn_start(self, session_id, turn, message):
        raise RuntimeError("boom in on_turn_start")

    @hookimpl
    def prefetch(self, session_id, query):
        raise RuntimeError("boom in prefetch")

    @hookimpl
    def on_pre_compress(self, session_id, messages):
        raise RuntimeError("boom in on_pre_compress")

    @hookimpl
    def on_session_switch(self, old_session_id, new_session_id, reason):
        raise RuntimeError("boom in on_session_switch")

    @hookimpl
    def on_session_end(self, session_id, messages, reason):
        raise RuntimeError("boom in on_session_end")

    @hookimpl
    def register_commands(self, app):
        raise RuntimeError("boom in register_commands")


def test_hook_on_turn_start() -> None:
    calls = []

    class Listener:
        @hookimpl
        def on_turn_start(self, session_id, turn, message):
            calls.append((session_id, turn, message))

    host = make_host(Listener(), Boom())
    assert host.call("on_turn_start", session_id="s", turn=3, message="go") == []
    assert calls == [("s", 3, "go")]
    assert [f.hook for f in host.hook_failures] == ["on_turn_start"]


def test_hook_prefetch() -> None:
    class Recall:
        def __init__(self, text):
            self.text = text

        @hookimpl
        def prefetch(self, query):
            return f"{self.text}:{query}" if self.text else None

    host = make_host(Recall("a"), Boom(), Recall(None), Recall("b"))
    # Last registered runs first; None results are dropped; the raiser is isolated.
    assert host.call("prefetch", session_id="s", query="q") == ["b:q", "a:q"]
    assert host.hook_failures[0].error == "RuntimeError: boom in prefetch"


def test_hook_on_pre_compress() -> None:
    class Saver:
        @hookimpl
        def on_pre_compress(self, session_id, messages):
            return f"{session_id} had {len(messages)} messages"

    host = make_host(Boom(), Saver())
    messages = [{"role": "user", "content": "x"}] * 4
    assert host.call("on_pre_compress", session_id="s9", messages=messages) == ["s9 had 4 messages"]


def test_hook_on_session_switch() -> None:
    switches = []

    class Listener:
        @hookimpl(tryfirst=True)
        def on_session_switch(self, old_session_id, new_session_id, reason):
            switches.append(("first", old_session_id, new_session_id, reason))

    class Late:
        @hookimpl(trylast=True)
        def on_session_switch(self, reason):
            switches.append(("last", reason))

    host = make_host(Listener(), Late(), Boom())
    host.call("on_session_switch", old_session_id=None, new_session_id="s2", reason="new")
    assert switches == [("first", None, "s2", "new"), ("last", "new")]


def test_hook_on_session_end() -> None:
    ended = []

    class Listener:
        @hookimpl
        def on_session_end(self, session_id, messages, reason):
            ended.append((session_id, messages[-1]["content"], reason))

    listener = Listener()
    host = make_host(listener, Boom())
    host.call("on_session_end", session_id="s", messages=[{"role": "assistant", "content": "bye"}], reason="user_exit")
    assert ended == [("s", "bye", "user_exit")]
    host.unregister(listener)
    host.call("on_session_end", session_id="s", messages=[], reason="new")
    assert len(ended) == 1


def test_hook_register_commands() -> None:
    class Commands:
        @hookimpl
        def register_commands(self, app):
            @app.command("ping")
            def ping() -> None:
                """Answer pong."""
                typer.echo("pong")

    host = make_host(Commands(), Boom())
    app = build_app(host)
    runner = CliRunner()
    assert runner.invoke(app, ["ping"]).output == "pong\n"
    help_text = runner.invoke(app, ["--help"]).output
    assert "ping" in help_text and "Answer pong." in help_text
    assert [f.hook for f in host.hook_failures] == ["register_commands"]


def test_hook_config_keys() -> None:
    import pytest

    from hermes.kernel import ConfigError, ConfigKey
    from hermes.kernel.config_schema import ConfigSchema

    class Keys:
        @hookimpl
        def config_keys(self):
            return [
                ConfigKey("relay.targets", "map", {}, "Relay targets by name."),
                ConfigKey("relay.targets.*.command", "str", "", "Command that starts one server."),
                ConfigKey("relay.targets.*.timeout", "float", 30.0, "Seconds per call.", min=1),
                ConfigKey("agent.max_iterations", "str", "x", "a plugin cannot redefine a kernel key"),
                ConfigKey("mcp.servers.*.command", "int", 0, "nor a kernel key below a wildcard"),
            ]

    schema = ConfigSchema.from_host(make_host(Keys(), Boom()))
    assert schema.find("relay.targets.github.command").description == "Command that starts one server."
    assert schema.find("agent.max_iterations").type == "int"
    assert schema.find("mcp.servers.github.command").type == "str"
    with pytest.raises(ConfigError, match=r"relay.targets.gh.timeout: 0 is not allowed; use a number of at least 1"):
        schema.validate({"relay": {"targets": {"gh": {"command": "x", "timeout": 0}}}})
    assert schema.unknown({"relay": {"targets": {"gh": {"comand": "x"}}}}) == ["relay.targets.gh.comand"]


def test_hook_on_memory_write() -> None:
    written = []

    class Mirror:
        @hookimpl
        def on_memory_write(self, action, target, content):
            written.append((action, target, content))

    host = make_host(Mirror(), Boom())
    host.call("on_memory_write", action="replace", target="memory", content="Uses WAL.")
    assert written == [("replace", "memory", "Uses WAL.")]
    assert host.hook_failures == type(host.hook_failures)()  # Boom has no on_memory_write


def test_hook_on_delegation() -> None:
    seen = []

    class Listener:
        @hookimpl
        def on_delegation(self, parent_session_id, task, result):
            seen.append((parent_session_id, task, result["status"]))
            return "ignored"

    host = make_host(Listener())
    assert host.call("on_delegation", parent_session_id="p", task="t", result={"status": "failed"}) == ["ignored"]
    assert seen == [("p", "t", "failed")]


def test_hook_on_post_compress() -> None:
    seen = []

    class Listener:
        @hookimpl
        def on_post_compress(self, session_id, new_session_id, fidelity):
            seen.append((session_id, new_session_id, fidelity["score"]))

    host = make_host(Listener(), Boom())
    host.call("on_post_compress", session_id="a", new_session_id="b", fidelity={"score": 0.75, "missing": []})
    assert seen == [("a", "b", 0.75)]
