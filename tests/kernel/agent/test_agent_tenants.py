"""An agent with a tenant: its sessions carry it, its lineage and sub-agents keep it, and it opens no other tenant's session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.kernel import TENANT_SERVICE, PluginHost
from hermes.kernel.agent import ModelRoute
from hermes.kernel.agent.delegation import Delegator
from hermes.kernel.agent.factory import build_agent
from hermes.kernel.config import load_config
from hermes.kernel.credentials import AuthStore
from hermes.kernel.home import HermesHome
from hermes.kernel.store import SessionNotFoundError
from hermes.kernel.testing import FakeModelServer, Reply, ScriptedProvider, ToolCall

from .test_compression import KeepLast
from .test_delegation import delegate, registry


def test_the_tenant_is_an_attribute_a_service_and_the_sessions_own(make_agent, store) -> None:
    agent = make_agent(ScriptedProvider(Reply("hi a")), tenant="a")
    assert agent.tenant == "a" and agent.tool_context.services[TENANT_SERVICE] == "a" and TENANT_SERVICE == "tenant"
    sid = agent.run_conversation("hello")["session_id"]
    assert store.get_session(sid)["tenant"] == "a"
    plain = make_agent(ScriptedProvider(Reply("hi")))
    assert plain.tenant is None and TENANT_SERVICE not in plain.tool_context.services  # as before tenants
    assert store.get_session(plain.run_conversation("hello")["session_id"])["tenant"] is None
    agent.tenant = None  # the tools' view follows the attribute
    assert TENANT_SERVICE not in agent.tool_context.services
    agent.tenant = "b"
    assert agent.tool_context.services[TENANT_SERVICE] == "b"


def test_compression_children_and_new_sessions_stay_in_the_tenant(make_agent, store) -> None:
    engine = KeepLast(context_length=100_000)
    agent = make_agent(ScriptedProvider(Reply("one"), Reply("two"), Reply("three")), engine=engine, tenant="a")
    first = agent.run_conversation("step one")["session_id"]
    engine.trigger_after = engine.responses
    second = agent.run_conversation("step two")["session_id"]
    assert second != first and store.get_session(second)["parent_session_id"] == first
    third = agent.new_session()
    assert [store.get_session(s)["tenant"] for s in (first, second, third)] == ["a", "a", "a"]


def test_another_tenants_session_is_not_found_exactly_as_a_missing_one(make_agent, store) -> None:
    theirs = store.create_session(tenant="b", system_prompt="b's prompt")
    store.append_message(theirs, {"role": "user", "content": "b's secret"})
    loose = store.create_session(system_prompt="nobody's")
    with pytest.raises(SessionNotFoundError) as missing:
        make_agent(ScriptedProvider(), tenant="a", session_id="20990101_000000_000000")
    for foreign in (theirs, loose):
        with pytest.raises(SessionNotFoundError) as refused:
            make_agent(ScriptedProvider(), tenant="a", session_id=foreign)
        assert str(refused.value) == str(missing.value).replace("20990101_000000_000000", foreign)
    mine = store.create_session(tenant="a", system_prompt="a's prompt")
    agent = make_agent(ScriptedProvider(Reply("ok")), tenant="a", session_id=mine)
    assert agent.session_id == mine and agent.system_prompt == "a's prompt"
    with pytest.raises(SessionNotFoundError):
        agent.switch_to(theirs)
    assert agent.session_id == mine and agent.messages == []  # nothing of b's was loaded
    # Without a tenant every session resumes, as before.
    assert make_agent(ScriptedProvider(), session_id=theirs).messages == [{"role": "user", "content": "b's secret"}]


def test_a_chosen_id_another_tenant_has_is_refused_and_never_written(make_agent, store) -> None:
    theirs = store.create_session(tenant="b")
    agent = make_agent(ScriptedProvider(Reply("ok")), tenant="a")
    agent.session_id = theirs  # a server names a new session's id before its first turn
    with pytest.raises(SessionNotFoundError):
        agent.run_conversation("write into b's session?")
    assert store.get_messages(theirs) == [] and store.get_session(theirs)["tenant"] == "b"


def test_sub_agents_work_inside_the_parents_tenant(make_agent, store, monkeypatch) -> None:
    provider = ScriptedProvider(delegate("look around"), Reply("parent done"))
    provider.script.lane("look around", Reply(tool_calls=[ToolCall("echo", {"text": "x"}, id="e1")]), Reply("child report"))
    tools = registry()
    agent = make_agent(provider, tools=tools, tenant="a")
    client = agent.primary.client
    agent.tool_context.services["delegator"] = Delegator(
        agent, routes_for_child=lambda: [ModelRoute(client, "child")], tools_for=lambda toolsets: tools
    )
    seen: list[object] = []
    make_child = Delegator._make_child

    def spy(self, task, on_event):
        child = make_child(self, task, on_event)
        seen.append(child.tool_context.services.get(TENANT_SERVICE))  # what the child's tools read
        return child

    monkeypatch.setattr(Delegator, "_make_child", spy)
    result = agent.run_conversation("delegate it")
    [report] = json.loads([m for m in result["messages"] if m["role"] == "tool"][0]["content"])["results"]
    child = store.get_session(report["session_id"])
    assert (child["source"], child["parent_session_id"], child["tenant"]) == ("subagent", agent.session_id, "a")
    assert seen == ["a"]


def _home(server: FakeModelServer, root: Path) -> HermesHome:
    home = HermesHome(root, "default").ensure()
    home.config_path.write_text(
        f"model:\n  provider: openai\n  name: gpt-4o\n  base_url: {server.openai_base_url}\n  timeout: 5\n"
        "sessions:\n  auto_title: false\n", encoding="utf-8")  # fmt: skip
    AuthStore(home.auth_path).add("openai", "sk-tenant-aaaaaaaaaaaaaaaa", "k1", 0)
    return home


def test_build_agent_passes_the_tenant_and_resumes_only_its_sessions(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    home = _home(fake_model_server, tmp_path / "home")

    def build(**kw):
        return build_agent(host=PluginHost(load_plugins=""), config=load_config(home, environ={}), home=home,
                           toolsets=["todo"], stream=False, cwd=tmp_path, **kw)  # fmt: skip

    fake_model_server.reply("hello a")
    agent = build(tenant="a")
    try:
        assert agent.tenant == "a" and agent.tool_context.services[TENANT_SERVICE] == "a"
        sid = agent.run_conversation("hi")["session_id"]
        assert agent.store.get_session(sid)["tenant"] == "a"
    finally:
        agent.close()
    again = build(tenant="a", resume=sid)
    assert again.session_id == sid
    again.close()
    for wrong in (dict(tenant="b", resume=sid), dict(tenant="a", resume=sid[:-2])):  # another tenant; a prefix
        with pytest.raises(SessionNotFoundError):
            build(**wrong)
    plain = build(resume=sid[:-2])  # without a tenant a unique prefix still resolves
    assert plain.session_id == sid and plain.tenant is None
    plain.close()
