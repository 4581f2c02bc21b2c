"""The agent's sessions: construction, start, resume, switch, end, close; exact hook arguments and stored rows."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel import ContextEngine, PluginHost, hookimpl
from hermes.kernel.agent import Agent, ModelRoute
from hermes.kernel.home import HermesHome
from hermes.kernel.testing import Reply, ScriptedProvider, ToolCall

from .conftest import echo_tools, scripted_client


class Hooks:
    """Every session hook the agent fires, with its arguments."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    @hookimpl
    def on_turn_start(self, session_id, turn, message):
        self.events.append(("turn", session_id, turn, message))

    @hookimpl
    def on_session_switch(self, old_session_id, new_session_id, reason):
        self.events.append(("switch", old_session_id, new_session_id, reason))

    @hookimpl
    def on_session_end(self, session_id, messages, reason):
        self.events.append(("end", session_id, [(m["role"], m["content"]) for m in messages], reason))


class Engine(ContextEngine):
    """Never compresses; records each session start and whether it still hears the kernel hooks."""

    name = "recording"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.starts: list[tuple[str, dict[str, Any]]] = []
        self.ends: list[str] = []
        self.fail_start = False

    def update_from_response(self, usage: Any) -> None:
        pass

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return False

    def compress(self, messages, current_tokens=None, focus_topic=None):
        return messages

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        self.starts.append((session_id, kwargs))
        if self.fail_start:
            raise RuntimeError("engine storage is gone")

    @hookimpl
    def on_session_end(self, session_id, messages, reason):
        self.ends.append(reason)


def agent_with(provider: ScriptedProvider, store, tmp_path: Path, **kw: Any) -> Agent:
    kw.setdefault("host", PluginHost(load_plugins=""))
    return Agent(routes=[ModelRoute(scripted_client(provider, "p"), "model-a")], tools=echo_tools(), store=store,
                 cwd=tmp_path, **kw)  # fmt: skip


def test_an_agent_needs_a_route() -> None:
    with pytest.raises(ValueError, match=r"^an agent needs at least one model route$"):
        Agent(routes=[], tools=echo_tools(), host=PluginHost(load_plugins=""))


def test_defaults_stream_with_90_steps_and_4096_tokens_from_the_cli(store, tmp_path: Path) -> None:
    provider = ScriptedProvider(Reply("hi"))
    agent = agent_with(provider, store, tmp_path)
    assert agent.budget.remaining == 90 and agent.result_budget is None and agent.children == set()
    result = agent.run_conversation("hello")
    (sent,) = provider.requests
    assert (sent.stream, sent.max_tokens, sent.temperature, sent.model) == (True, 4096, None, "model-a")
    row = store.get_session(result["session_id"])
    assert (row["source"], row["model"], row["parent_session_id"]) == ("cli", "model-a", None)
    agent.close()
    assert store.get_session(result["session_id"]) is not None  # the agent does not own the store: still open


def test_the_tool_context_carries_what_the_agent_was_given(store, tmp_path: Path) -> None:
    home, config = HermesHome(tmp_path / "home", "default"), {"k": "v"}

    def ask(question: str, choices: list[str] | None) -> str:
        return "yes"

    def approve(command: str, why: str) -> bool:
        return True

    agent = agent_with(ScriptedProvider(Reply("ok")), store, tmp_path, home=home, config=config, ask_user=ask,
                       approve=approve, services={"extra": 1}, results_dir=tmp_path / "results")  # fmt: skip
    ctx = agent.tool_context
    assert (ctx.session_id, ctx.home, ctx.config, ctx.cwd) == (None, home, config, tmp_path)
    assert ctx.services == {"store": store, "extra": 1} and (ctx.ask_user, ctx.approve) == (ask, approve)
    assert agent.result_budget is not None and not ctx.is_interrupted()
    agent.interrupt()
    assert ctx.is_interrupted() and agent.interrupted
    result = agent.run_conversation("go")  # a new turn clears the flag
    assert result["completed"] and not agent.interrupted and ctx.session_id == result["session_id"]


def test_a_new_session_is_stored_with_its_prompt_source_model_and_parent(store, tmp_path: Path) -> None:
    hooks, engine = Hooks(), Engine()
    host = PluginHost(load_plugins="")
    host.register(hooks)
    home = HermesHome(tmp_path / "home", "default")
    agent = agent_with(ScriptedProvider(Reply("ok")), store, tmp_path, host=host, engine=engine, source="telegram",
                       parent_session_id="parent-1", home=home)  # fmt: skip
    result = agent.run_conversation("first")
    sid = result["session_id"]
    row = store.get_session(sid)
    assert (row["source"], row["model"], row["parent_session_id"]) == ("telegram", "model-a", "parent-1")
    assert row["system_prompt"] == agent.system_prompt and f"- session: {sid}\n" in agent.system_prompt
    assert engine.starts == [(sid, {"resumed": False, "hermes_home": home, "platform": "telegram", "model": "model-a"})]
    assert hooks.events == [("turn", sid, 1, "first")]


def test_a_failing_engine_start_is_logged_and_the_turn_goes_on(store, tmp_path: Path, caplog) -> None:
    engine = Engine()
    engine.fail_start = True
    with caplog.at_level(logging.WARNING, logger="hermes.kernel.agent.sessions"):
        result = agent_with(ScriptedProvider(Reply("fine")), store, tmp_path, engine=engine).run_conversation("x")
    assert result["final_response"] == "fine"
    assert [r.getMessage() for r in caplog.records] == [
        "context engine 'recording': on_session_start failed: RuntimeError: engine storage is gone"]


def test_new_session_ends_the_old_one_and_counts_turns_afresh(store, tmp_path: Path) -> None:
    hooks = Hooks()
    host = PluginHost(load_plugins="")
    host.register(hooks)
    provider = ScriptedProvider(Reply("one"), Reply("two"), Reply("three"))
    agent = agent_with(provider, store, tmp_path, host=host)
    old = agent.run_conversation("a")["session_id"]
    agent.run_conversation("b")
    new = agent.new_session()
    assert new != old and agent.session_id == new and agent.messages == [] and agent.turn == 0
    assert hooks.events[-2:] == [("end", old, [("user", "a"), ("assistant", "one"), ("user", "b"), ("assistant", "two")], "new"),
                                 ("switch", old, new, "new")]  # fmt: skip
    assert store.get_session(old)["end_reason"] == "new" and store.get_session(new)["end_reason"] is None
    agent.run_conversation("c")
    assert hooks.events[-1] == ("turn", new, 1, "c")
    assert [(m["role"], m["content"]) for m in store.get_messages(new)] == [("user", "c"), ("assistant", "three")]
    agent.new_session("reset")
    assert store.get_session(new)["end_reason"] == "reset" and hooks.events[-1][3] == "reset"


def test_a_session_ends_once_with_its_reason(store, tmp_path: Path) -> None:
    hooks = Hooks()
    host = PluginHost(load_plugins="")
    host.register(hooks)
    agent = agent_with(ScriptedProvider(Reply("ok")), store, tmp_path, host=host)
    agent.end_session()  # nothing started yet: nothing to end
    assert hooks.events == []
    sid = agent.run_conversation("x")["session_id"]
    agent.end_session()
    agent.end_session("again")
    assert [e for e in hooks.events if e[0] == "end"] == [("end", sid, [("user", "x"), ("assistant", "ok")], "user_exit")]
    assert store.get_session(sid)["end_reason"] == "user_exit"


def test_a_session_deleted_under_the_agent_ends_as_deleted_and_the_next_turn_starts_afresh(store, tmp_path: Path) -> None:
    hooks = Hooks()
    host = PluginHost(load_plugins="")
    host.register(hooks)
    agent = agent_with(ScriptedProvider(Reply("one"), Reply("two")), store, tmp_path, host=host)
    lost = agent.run_conversation("a")["session_id"]
    store.delete_session(lost)
    agent.discard_lost_session()
    assert hooks.events[-1] == ("end", lost, [("user", "a"), ("assistant", "one")], "deleted")
    assert (agent.session_id, agent.system_prompt, agent.messages, agent.turn) == (None, None, [], 0)
    fresh = agent.run_conversation("b")["session_id"]
    assert fresh != lost and store.get_session(lost) is None
    assert [(m["role"], m["content"]) for m in store.get_messages(fresh)] == [("user", "b"), ("assistant", "two")]
    assert hooks.events[-1] == ("turn", fresh, 1, "b")


def test_resume_needs_a_store() -> None:
    with pytest.raises(ValueError, match=r"^resuming a session needs a session store$"):
        Agent(routes=[ModelRoute(scripted_client(ScriptedProvider()), "m")], tools=echo_tools(),
              host=PluginHost(load_plugins=""), session_id="any")  # fmt: skip


def test_resume_loads_the_prompt_history_and_turn_count(store, tmp_path: Path) -> None:
    sid = store.create_session(source="cli", model="m", system_prompt="frozen")
    call = {"id": "t1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
    # Two user turns among six messages: the turn count is the user messages, not all of them.
    store.append_messages(sid, [
        {"role": "user", "content": "q1"}, {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "t1", "tool_name": "echo", "content": "echo: "},
        {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2"},
    ])  # fmt: skip
    store.end_session(sid, "user_exit")
    hooks, engine = Hooks(), Engine()
    host = PluginHost(load_plugins="")
    host.register(hooks)
    provider = ScriptedProvider(Reply("a3"))
    agent = agent_with(provider, store, tmp_path, host=host, engine=engine, session_id=sid)
    assert (agent.session_id, agent.system_prompt, agent.turn, agent.tool_context.session_id) == (sid, "frozen", 2, sid)
    assert engine.starts == [(sid, {"resumed": True, "hermes_home": None, "platform": "cli", "model": "model-a"})]
    agent.run_conversation("q3")
    assert hooks.events[0] == ("turn", sid, 3, "q3")
    assert [m["content"] for m in provider.requests[0].messages] == ["frozen", "q1", None, "echo: ", "a1", "q2", "a2", "q3"]
    agent.end_session("user_exit")  # a resumed session can end again
    assert [e[3] for e in hooks.events if e[0] == "end"] == ["user_exit"]


def test_resume_after_a_repair_inside_the_history_stores_the_new_turn_whole(store, tmp_path: Path) -> None:
    sid = store.create_session(source="cli", model="m", system_prompt="frozen")
    store.append_messages(sid, [
        {"role": "user", "content": "q1"},
        {"role": "tool", "tool_call_id": "orphan", "tool_name": "echo", "content": "a result without its call"},
        {"role": "assistant", "content": "a1"},
    ])  # fmt: skip
    agent = agent_with(ScriptedProvider(Reply("a2")), store, tmp_path, session_id=sid)
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]  # the orphan is dropped, in memory only
    agent.run_conversation("q2")
    stored = [(m["role"], m["content"]) for m in store.get_messages(sid)]
    assert stored[-2:] == [("user", "q2"), ("assistant", "a2")] and len(stored) == 5


def test_a_row_without_a_prompt_gets_one_built_and_is_not_created_again(store, tmp_path: Path) -> None:
    sid = store.create_session(source="web", model="m", system_prompt=None)
    provider = ScriptedProvider(Reply("ok"))
    agent = agent_with(provider, store, tmp_path, session_id=sid, system_message="Be brief.")
    assert agent.system_prompt is None
    result = agent.run_conversation("x")
    assert result["completed"] and result["session_id"] == sid
    assert "Be brief." in provider.requests[0].messages[0]["content"]
    assert store.get_session(sid)["source"] == "web"


def test_a_prompt_less_row_deleted_before_its_first_turn_is_created_again(store, tmp_path: Path) -> None:
    sid = store.create_session(source="web", model="m", system_prompt=None)
    agent = agent_with(ScriptedProvider(Reply("ok")), store, tmp_path, session_id=sid)
    store.delete_session(sid)
    assert agent.run_conversation("x")["session_id"] == sid
    row = store.get_session(sid)
    assert row is not None and row["system_prompt"] == agent.system_prompt and row["source"] == "cli"
    assert [m["content"] for m in store.get_messages(sid)] == ["x", "ok"]


def test_switch_to_flushes_loads_and_announces(store, tmp_path: Path) -> None:
    hooks = Hooks()
    host = PluginHost(load_plugins="")
    host.register(hooks)
    other = store.create_session(source="cli", model="m", system_prompt="other prompt")
    store.append_messages(other, [{"role": "user", "content": "old q"}, {"role": "assistant", "content": "old a"}])
    agent = agent_with(ScriptedProvider(Reply("here"), Reply("there")), store, tmp_path, host=host)
    first = agent.run_conversation("a")["session_id"]
    agent.switch_to(other)
    assert hooks.events[-1] == ("switch", first, other, "resume")
    assert (agent.session_id, agent.system_prompt, agent.turn) == (other, "other prompt", 1)
    agent.run_conversation("b")
    assert [m["content"] for m in store.get_messages(other)] == ["old q", "old a", "b", "there"]
    agent.switch_to(first, reason="branch")
    assert hooks.events[-1] == ("switch", other, first, "branch")


def test_fork_settings_are_the_quiet_copys_arguments(store, tmp_path: Path) -> None:
    home, config = HermesHome(tmp_path / "home", "default"), {"c": 1}
    agent = agent_with(ScriptedProvider(), store, tmp_path, soul_path=tmp_path / "SOUL.md", max_tokens=1234, home=home,
                       config=config)  # fmt: skip
    assert agent.fork_settings() == {"soul_path": tmp_path / "SOUL.md", "cwd": tmp_path, "stream": False,
                                     "max_tokens": 1234, "home": home, "config": config, "tenant": None}  # fmt: skip
    agent.tenant = "acme"
    assert agent.fork_settings()["tenant"] == "acme"


class Lease:
    def __init__(self) -> None:
        self.released = 0

    def release(self) -> None:
        self.released += 1


def test_close_releases_leases_unhooks_the_engine_and_closes_an_owned_store(tmp_path: Path) -> None:

    store = SQLiteSessionStore(tmp_path / "owned.db")
    host = PluginHost(load_plugins="")
    engine, lease = Engine(), Lease()
    routes = [ModelRoute(scripted_client(ScriptedProvider(Reply("ok")), "p"), "m", lease),
              ModelRoute(scripted_client(ScriptedProvider(), "q"), "n", object())]  # a lease without release()
    agent = Agent(routes=routes, tools=echo_tools(), host=host, store=store, engine=engine, cwd=tmp_path, owns_store=True)
    agent.run_conversation("x")
    agent.close()
    assert lease.released == 1
    host.call("on_session_end", session_id="s", messages=[], reason="probe")
    assert engine.ends == []  # unregistered: the engine no longer hears the kernel hooks
    with pytest.raises(Exception):
        store.get_session("anything")  # closed


def test_an_interrupt_reaches_running_sub_agents(store, tmp_path: Path) -> None:
    parent = agent_with(ScriptedProvider(), store, tmp_path)
    child = agent_with(ScriptedProvider(), store, tmp_path)
    grandchild = agent_with(ScriptedProvider(), store, tmp_path)
    parent.children.add(child)
    child.children.add(grandchild)
    parent.interrupt()
    assert parent.interrupted and child.interrupted and grandchild.interrupted


def test_events_carry_kind_text_and_data_and_a_failing_display_never_ends_the_turn(store, tmp_path: Path, caplog) -> None:
    events: list[tuple[str, str, dict[str, Any]]] = []

    def show(event) -> None:
        events.append((event.kind, event.text, dict(event.data)))
        raise RuntimeError("the terminal went away")

    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "hi"}, id="c1")]), Reply("done"))
    with caplog.at_level(logging.DEBUG, logger="hermes.kernel.agent.events"):
        result = agent_with(provider, store, tmp_path, on_event=show, stream=False).run_conversation("go")
    assert result["final_response"] == "done"
    start, end = events[0], events[1]
    assert start == ("tool_start", "echo", {"call_id": "c1", "arguments": '{"text":"hi"}'})
    assert (end[0], end[1], end[2]["call_id"], end[2]["error"]) == ("tool_end", "echo", "c1", False)
    failures = [r for r in caplog.records if r.getMessage() == "event handler failed"]
    assert len(failures) == len(events) == 2 and all(r.exc_info and r.levelname == "DEBUG" for r in failures)
