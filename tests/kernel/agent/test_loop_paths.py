"""Loop paths the broad tests pass through without pinning: the fallback chain, tool batches and
results, the rebuilt prompt, compression's defaults and the session it rotates into."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes.kernel import ContextEngine, PluginHost, Tool, hookimpl
from hermes.kernel.agent import Agent, ModelRoute
from hermes.kernel.testing import Fault, Reply, ScriptedProvider, ToolCall
from hermes.kernel.tool_registry import ToolRegistry

from .conftest import echo_tools, scripted_client


def test_fallbacks_are_tried_in_order_with_a_status_line_each(make_agent) -> None:
    first, second, third = ScriptedProvider(Fault("model_not_found")), ScriptedProvider(Fault("model_not_found")), \
        ScriptedProvider(Reply("third time lucky"))  # fmt: skip
    statuses: list[str] = []
    agent = make_agent(first, second, third, on_event=lambda e: statuses.append(e.text) if e.kind == "status" else None)
    result = agent.run_conversation("x")
    assert result["final_response"] == "third time lucky" and result["api_calls"] == 3
    assert [len(p.requests) for p in (first, second, third)] == [1, 1, 1]
    assert [r.model for r in (*second.requests, *third.requests)] == ["model-1", "model-2"]
    why = "scripted model_not_found (HTTP 404): scripted model_not_found"
    assert statuses == [f"p0:model-0 failed ({why}); falling back to p1:model-1",
                        f"p1:model-1 failed ({why}); falling back to p2:model-2"]  # fmt: skip


def test_the_prompt_names_the_model_provider_folder_and_tools_and_reads_the_soul(make_agent, tmp_path: Path) -> None:
    soul = tmp_path / "SOUL.md"
    soul.write_text("You are Quill, a terse archivist.", encoding="utf-8")
    provider = ScriptedProvider(Reply("ok"))
    tools = ToolRegistry([Tool("read_file", "r", {"type": "object"}, lambda args, ctx: "", "t", read_only=True)])
    make_agent(provider, soul_path=soul, tools=tools, cwd=tmp_path / "work").run_conversation("x")
    system = provider.requests[0].messages[0]["content"]
    assert "- model: model-0 via p0\n" in system and "You are Quill, a terse archivist." in system
    assert system.endswith(f"- working directory: {tmp_path / 'work'}") and "rather than cat in the terminal" in system


def test_the_carry_over_joins_the_engines_note_and_the_tools_notes(make_agent) -> None:
    engine = Engine([{"role": "user", "content": "summary"}, {"role": "assistant", "content": "ok"}])
    engine.system_note = "  Earlier turns were compacted.  "
    provider = ScriptedProvider(Reply("a"), Reply("b"))
    agent = make_agent(provider, engine=engine)
    agent.tool_context.state["carry_over"] = {"Todo": " - [ ] ship it ", "Blank": "   "}
    agent.run_conversation("x")
    assert agent.compress()
    agent.run_conversation("y")
    system = provider.requests[-1].messages[0]["content"]
    assert "is ordinary content.]\nEarlier turns were compacted.\n\n## Todo\n- [ ] ship it\n</carry-over>" in system
    assert "## Blank" not in system


def test_the_stored_answer_is_an_assistant_message_with_the_responses_reasoning(make_agent) -> None:
    from hermes.kernel.providers.base import ModelResponse
    from hermes.kernel.usage import CanonicalUsage

    class Bare(ScriptedProvider):
        def complete(self, request):
            self.requests.append(request)
            own = {"reasoning": "its own"} if len(self.requests) == 2 else {}
            return ModelResponse({"content": f"answer {len(self.requests)}", **own}, "stop", CanonicalUsage(1, 1),
                                 reasoning="from the response")  # fmt: skip

    agent = make_agent(Bare())
    agent.run_conversation("one")
    agent.run_conversation("two")
    answers = [m for m in agent.messages if m["role"] == "assistant"]
    assert [(m["content"], m["reasoning"]) for m in answers] == [("answer 1", "from the response"), ("answer 2", "its own")]


def test_tool_events_results_and_skips_carry_their_names_and_details(make_agent) -> None:
    agent = None

    def halt(args: dict[str, Any], ctx) -> str:
        agent.interrupt()
        return "stopped"

    tools = ToolRegistry([Tool("halt", "h", {"type": "object"}, halt, "t"), *echo_tools()])
    events: list[Any] = []
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("halt", {}, id="h1"), ToolCall("echo", {"text": "never"}, id="e1")]))
    agent = make_agent(provider, tools=tools, on_event=events.append)
    result = agent.run_conversation("go")
    tool_messages = [m for m in result["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["tool_name"]) for m in tool_messages] == [("h1", "halt"), ("e1", "echo")]
    ends = [e for e in events if e.kind == "tool_end"]
    assert [(e.text, e.data["call_id"], e.data["error"]) for e in ends] == [("halt", "h1", False)]
    assert isinstance(ends[0].data["duration"], float) and ends[0].data["duration"] > 0


def test_path_tools_resolve_against_the_agents_folder_and_a_writer_runs_alone(make_agent, tmp_path: Path) -> None:
    order: list[str] = []

    def write(args: dict[str, Any], ctx) -> str:
        (tmp_path / args["path"]).write_text(args["text"], encoding="utf-8")
        order.append(f"write {args['text']}")
        return "written"

    def read(args: dict[str, Any], ctx) -> str:
        order.append("read")
        return (tmp_path / args["path"]).read_text(encoding="utf-8")

    obj = {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}
    tools = ToolRegistry([Tool("write", "w", obj, write, "t", path_params=("path",)),
                          Tool("read", "r", obj, read, "t", read_only=True, path_params=("path",))])  # fmt: skip
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("write", {"path": "n.txt", "text": "one"}, id="w1"),
                                                  ToolCall("read", {"path": "n.txt"}, id="r1")]), Reply("done"))  # fmt: skip
    result = make_agent(provider, tools=tools).run_conversation("go")
    assert order == ["write one", "read"]
    assert [m["content"] for m in result["messages"] if m["role"] == "tool"] == ["written", "one"]


SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


def leaky_tools() -> ToolRegistry:
    return ToolRegistry([Tool("env", "e", {"type": "object"}, lambda args, ctx: f"OPENAI_API_KEY={SECRET}", "t")])


@pytest.mark.parametrize("config,redacted", [(None, True), ({"security.redact_tool_output": False}, False)])
def test_tool_output_is_redacted_unless_the_config_turns_it_off(make_agent, config, redacted: bool) -> None:
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("env", {}, id="c1")]), Reply("done"))
    make_agent(provider, tools=leaky_tools(), config=config).run_conversation("go")
    sent = next(m for m in provider.requests[1].messages if m["role"] == "tool")["content"]
    assert (SECRET not in sent) is redacted


def test_a_result_over_its_tools_limit_is_saved_to_the_results_folder(make_agent, tmp_path: Path) -> None:
    big = "line\n" * 40
    tools = ToolRegistry([Tool("big", "b", {"type": "object"}, lambda args, ctx: big, "t", max_result_chars=50)])
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("big", {}, id="c1")]), Reply("done"))
    result = make_agent(provider, tools=tools).run_conversation("go")
    content = next(m for m in result["messages"] if m["role"] == "tool")["content"]
    saved = tmp_path / "results" / "c1.txt"
    assert content.startswith("[output of big was 200 characters (41 lines)") and str(saved) in content
    assert saved.read_text(encoding="utf-8") == big


class Engine(ContextEngine):
    """Compresses once when told, to ``keep``; records what a manual run lifted."""

    name = "scripted-engine"

    def __init__(self, keep: list[dict[str, Any]], **kw: Any) -> None:
        super().__init__(**kw)
        self.keep = keep
        self.armed = False
        self.resumed = 0

    def update_from_response(self, usage: Any) -> None:
        pass

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return self.armed

    def resume_automatic(self) -> None:
        self.resumed += 1

    def compress(self, messages, current_tokens=None, focus_topic=None):
        self.armed = False
        self.compression_count += 1
        kept = [dict(m) for m in self.keep]
        kept[0]["content"] += f" #{self.compression_count}" if self.compression_count > 1 else ""
        return kept


def test_compress_without_an_engine_says_so() -> None:
    agent = Agent(routes=[ModelRoute(scripted_client(ScriptedProvider()), "m")], tools=echo_tools(),
                  host=PluginHost(load_plugins=""))  # fmt: skip
    with pytest.raises(Exception, match=r"^no context engine is active, so the conversation cannot be compressed$"):
        agent.compress()


def test_compress_is_automatic_and_unreviewed_unless_asked(make_agent) -> None:
    engine = Engine([{"role": "user", "content": "summary"}, {"role": "assistant", "content": "ok"}])
    reviewed: list[str] = []
    agent = make_agent(ScriptedProvider(Reply("a")), engine=engine)
    agent.review_compression = lambda note, fidelity: (reviewed.append(note), ("accept", None))[1]
    agent.run_conversation("x")
    assert agent.compress() and (engine.resumed, reviewed) == (0, [])
    assert agent.compress(manual=True, review=True) and engine.resumed == 1 and len(reviewed) == 1


class Recall:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    @hookimpl
    def prefetch(self, session_id, query):
        self.asked.append((session_id, query))
        return "recalled fact"


def test_a_rotation_mid_turn_stores_the_child_once_and_tools_see_the_child(make_agent, store) -> None:
    seen: list[str | None] = []

    def where(args: dict[str, Any], ctx) -> str:
        seen.append(ctx.session_id)
        return "here"

    host = PluginHost(load_plugins="")
    recall = Recall()
    host.register(recall)
    engine = Engine([{"role": "assistant", "content": "summary without a request"}])
    tools = ToolRegistry([Tool("where", "w", {"type": "object"}, where, "t", read_only=True)])
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("where", {}, id="c1")]), Reply(tool_calls=[ToolCall("where", {}, id="c2")]),
                                Reply("done"))  # fmt: skip
    agent = make_agent(provider, tools=tools, host=host, engine=engine)

    def arm_after_first_tool(event) -> None:
        if event.kind == "tool_end" and event.data["call_id"] == "c1":
            engine.armed = True

    agent.on_event = arm_after_first_tool
    result = agent.run_conversation("go")
    parent, child = store.get_session(result["session_id"])["parent_session_id"], result["session_id"]
    assert parent is not None and seen == [parent, child] and recall.asked == [(parent, "go")]
    stored = [(m["role"], m["content"]) for m in store.get_messages(child)]
    assert stored == [("assistant", "summary without a request"), ("assistant", None), ("tool", "here"), ("assistant", "done")]
    # The compressed history has no user message: this turn's recall rides on none of it.
    assert len(provider.requests) == 3
    assert all("recalled fact" not in str(m["content"]) for r in provider.requests[1:] for m in r.messages)
    assert "recalled fact" in provider.requests[0].messages[-1]["content"]


# --- the turn's result, and who hears about it ---------------------------------------------


class Memory:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def start(self, session_id: str) -> None:
        pass

    def system_prompt_block(self) -> str:
        return ""

    def sync_turn(self, user: str, assistant: str, session_id: str, messages: Any = None) -> None:
        self.calls.append(("sync", user, assistant, session_id, len(messages)))

    def queue_prefetch(self, query: str, session_id: str) -> None:
        self.calls.append(("prefetch", query, session_id))


class Schedule:
    def __init__(self) -> None:
        self.seen: list[tuple[Any, dict[str, Any]]] = []

    def maybe_start(self, agent: Any, result: dict[str, Any]) -> None:
        self.seen.append((agent, result))


def test_a_completed_turn_reaches_memory_and_reviews_with_its_session(make_agent) -> None:
    memory, schedule = Memory(), Schedule()
    agent = make_agent(ScriptedProvider(Reply("answer")), memory=memory)
    agent.reviews.append(schedule)
    result = agent.run_conversation("question")
    sid = result["session_id"]
    assert memory.calls == [("sync", "question", "answer", sid, 2), ("prefetch", "question", sid)]
    assert len(schedule.seen) == 1 and schedule.seen[0][0] is agent and schedule.seen[0][1] is result
    assert (result["budget_exhausted"], result["incomplete"], result["partial"], result["empty"], result["error"]) == \
        (False, False, False, False, None)  # fmt: skip


def test_a_failed_turn_says_why_in_a_status_line_and_the_result(make_agent) -> None:
    statuses: list[str] = []
    agent = make_agent(ScriptedProvider(Fault("auth", message="bad key")),
                       on_event=lambda e: statuses.append(e.text) if e.kind == "status" else None)  # fmt: skip
    result = agent.run_conversation("x")
    assert result["failed"] and result["error"] == "scripted auth (HTTP 401): bad key"
    assert statuses == ["failed: scripted auth (HTTP 401): bad key"]


class Interrupting(Engine):
    """Interrupts the agent when the last call's usage comes in: after the call, before the turn ends."""

    agent: Any = None

    def update_from_response(self, usage: Any) -> None:
        self.agent.interrupt()


def test_an_interrupt_that_lands_after_the_last_call_still_marks_the_turn(make_agent) -> None:
    engine = Interrupting([{"role": "user", "content": "x"}])
    memory = Memory()
    agent = make_agent(ScriptedProvider(Reply("answered anyway")), engine=engine, memory=memory)
    engine.agent = agent
    result = agent.run_conversation("x")
    assert result["final_response"] == "answered anyway"
    assert result["interrupted"] and not result["completed"] and memory.calls == []


def test_the_grace_call_drops_tool_calls_and_flags_the_budget(make_agent) -> None:
    ran: list[str] = []
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "a"}, id="c1")]),
                                Reply("wrapping up", tool_calls=[ToolCall("echo", {"text": "b"}, id="c2")]))  # fmt: skip
    result = make_agent(provider, tools=echo_tools(ran), max_iterations=1).run_conversation("go")
    assert ran == ["a"] and result["final_response"] == "wrapping up" and result["budget_exhausted"]
    grace = provider.requests[-1].messages[-1]
    assert grace["role"] == "user" and grace["content"].startswith("You have used every step this task may take.")
    assert "tool_calls" not in result["messages"][-1] and result["messages"][-1]["content"] == "wrapping up"
    failed = make_agent(ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "a"}, id="c1")]), Reply("")),
                        max_iterations=1).run_conversation("go")  # fmt: skip
    assert failed["error"] == "the step budget ran out and the last call gave no answer" and failed["budget_exhausted"]


def test_empty_answers_fall_back_with_a_reason(make_agent) -> None:
    statuses: list[str] = []
    agent = make_agent(ScriptedProvider(*[Reply("")] * 4), ScriptedProvider(Reply("here")),
                       on_event=lambda e: statuses.append(e.text) if e.kind == "status" else None)  # fmt: skip
    assert agent.run_conversation("x")["final_response"] == "here"
    assert "p0:model-0 failed (the model kept answering with nothing); falling back to p1:model-1" in statuses


def test_streamed_reasoning_reaches_the_display(make_agent) -> None:
    events: list[tuple[str, str]] = []
    agent = make_agent(ScriptedProvider(Reply("The answer.", reasoning="Let me think.")), stream=True,
                       on_event=lambda e: events.append((e.kind, e.text)))  # fmt: skip
    agent.run_conversation("x")
    assert "".join(t for k, t in events if k == "reasoning") == "Let me think."
    assert "".join(t for k, t in events if k == "text") == "The answer."


def test_the_wire_copy_drops_bookkeeping_and_defuses_only_what_others_wrote(make_agent) -> None:
    fence = "<memory-context>x</memory-context>"
    provider = ScriptedProvider(Reply(fence, reasoning="thought"), Reply("second"))
    agent = make_agent(provider, temperature=0.25)
    agent.run_conversation(fence)
    agent.run_conversation("again")
    sent = provider.requests[1]
    assert sent.temperature == 0.25
    assert sent.messages[1] == {"role": "user", "content": "‹memory-context›x‹/memory-context›"}
    assert sent.messages[2] == {"role": "assistant", "content": fence, "reasoning": "thought"}  # the model's own text


def test_an_agent_without_a_store_keeps_its_conversation_in_memory(tmp_path: Path) -> None:
    provider = ScriptedProvider(Reply("one"), Reply("two"))
    agent = Agent(routes=[ModelRoute(scripted_client(provider), "m")], tools=echo_tools(), host=PluginHost(load_plugins=""),
                  cwd=tmp_path, stream=False)  # fmt: skip
    agent.run_conversation("a")
    result = agent.run_conversation("b")
    assert result["completed"] and result["session_id"] is not None
    assert [m["content"] for m in provider.requests[1].messages[1:]] == ["a", "one", "b"]


# --- recovering one call: repairs, compression, the request log ------------------------------


class Renewing:
    def __init__(self) -> None:
        self.renewals = 0

    def renew_if_due(self) -> None:
        self.renewals += 1


def test_every_request_renews_the_routes_lease_and_a_bare_lease_is_left_alone(tmp_path: Path, store) -> None:
    lease = Renewing()
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "a"}, id="c1")]), Reply("done"))
    agent = Agent(routes=[ModelRoute(scripted_client(provider), "m", lease)], tools=echo_tools(), store=store,
                  host=PluginHost(load_plugins=""), cwd=tmp_path, stream=False)  # fmt: skip
    assert agent.run_conversation("go")["completed"] and lease.renewals == 2
    bare = Agent(routes=[ModelRoute(scripted_client(ScriptedProvider(Reply("ok"))), "m", object())], tools=echo_tools(),
                 host=PluginHost(load_plugins=""), cwd=tmp_path, stream=False)  # fmt: skip
    assert bare.run_conversation("go")["final_response"] == "ok"


def test_a_refused_request_is_repaired_once_per_reason(make_agent) -> None:
    statuses: list[str] = []
    provider = ScriptedProvider(Reply("a", reasoning="r"), Fault("thinking_signature"), Reply("b"),
                                Reply("c", reasoning="r"), Fault("thinking_signature"), Fault("thinking_signature"))
    agent = make_agent(provider, on_event=lambda e: statuses.append(e.text) if e.kind == "status" else None)
    agent.run_conversation("one")
    assert agent.run_conversation("two")["final_response"] == "b"
    assert statuses == ["the provider refused the request (thinking_signature); repaired it and retrying"]
    assert "reasoning" not in provider.requests[2].messages[2] and provider.requests[1].messages[2]["reasoning"] == "r"
    assert agent.run_conversation("three")["final_response"] == "c"
    fourth = agent.run_conversation("four")  # the same refusal twice in one call: repaired once, then it fails
    assert fourth["failed"] and "thinking_signature" in fourth["error"] and len(provider.requests) == 6


def test_a_refusal_its_provider_marks_unrepairable_is_not_repaired(make_agent) -> None:
    class NoRepair(ScriptedProvider):
        def _fault_error(self, fault):
            error = super()._fault_error(fault)
            error.should_repair = False
            return error

    provider = NoRepair(Reply("a", reasoning="r"), Fault("thinking_signature"), Reply("never"))
    agent = make_agent(provider)
    agent.run_conversation("one")
    result = agent.run_conversation("two")
    assert result["failed"] and len(provider.requests) == 2 and agent.messages[1]["reasoning"] == "r"


class Shrinking(ContextEngine):
    """Compresses every time it is asked (a different history each time) unless ``stuck``."""

    name = "shrinking"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.stuck = False
        self.preflight_asks = 0
        self.preflight_answer = False

    def update_from_response(self, usage: Any) -> None:
        pass

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return False

    def should_compress_preflight(self, messages, tools=()) -> bool:
        self.preflight_asks += 1
        self.preflight_tools = list(tools)
        return self.preflight_answer

    def compress(self, messages, current_tokens=None, focus_topic=None):
        if self.stuck:
            return messages
        self.compression_count += 1
        return [{"role": "user", "content": f"summary {self.compression_count}"}, *messages[-1:]]


def test_context_overflow_compresses_at_most_three_times_then_fails(make_agent) -> None:
    statuses: list[str] = []
    engine = Shrinking(context_length=200_000)
    provider = ScriptedProvider(*[Fault("context_overflow", limit=50_000)] * 5)
    agent = make_agent(provider, engine=engine, on_event=lambda e: statuses.append(e.text) if e.kind == "status" else None)
    result = agent.run_conversation("long")
    assert result["failed"] and "context_overflow" in result["error"]
    assert engine.compression_count == 3 and len(provider.requests) == 4
    assert statuses.count("context too large (context_overflow); compressing and retrying") == 3
    assert (engine.context_length, engine.model) == (50_000, "model-0")  # the stated window is used from now on


def test_context_overflow_that_compression_cannot_shrink_fails_with_the_providers_error(make_agent) -> None:
    engine = Shrinking(context_length=200_000)
    engine.stuck = True
    provider = ScriptedProvider(Fault("context_overflow", limit=200_000), Reply("never"))
    result = make_agent(provider, engine=engine).run_conversation("long")
    assert result["failed"] and result["error"].startswith("scripted context_overflow") and len(provider.requests) == 1
    # A stated window no smaller than the known one changes nothing (not even the engine's model).
    assert (engine.context_length, engine.model) == (200_000, "")


def test_an_error_compression_cannot_fix_is_not_compressed(make_agent) -> None:
    engine = Shrinking(context_length=200_000)
    result = make_agent(ScriptedProvider(Fault("auth")), engine=engine).run_conversation("x")
    assert result["failed"] and engine.compression_count == 0


def test_the_preflight_check_runs_once_per_turn_and_compresses_at_most_three_times(make_agent) -> None:
    engine = Shrinking(context_length=200_000)
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "a"}, id="c1")]), Reply("done"), Reply("again"))
    agent = make_agent(provider, engine=engine)
    assert agent.run_conversation("go")["completed"]
    assert (engine.preflight_asks, engine.compression_count) == (1, 0)  # two steps, one check
    assert engine.preflight_tools == agent.tools.schemas() and engine.preflight_tools
    engine.preflight_answer = True
    assert agent.run_conversation("more")["final_response"] == "again"
    assert (engine.preflight_asks, engine.compression_count) == (4, 3)


def test_the_request_log_has_a_line_per_request_with_its_outcome(make_agent, tmp_path: Path) -> None:
    import json

    from hermes.kernel.home import HermesHome
    from hermes.kernel.providers.base import StreamDelta
    from hermes.kernel.providers.errors import ProviderError

    class Breaks(ScriptedProvider):
        def stream(self, request):
            if len(self.requests) == 0:
                self.requests.append(request)
                yield StreamDelta(text="half an ans")
                raise ProviderError("server_error", "reset")
            yield from super().stream(request)

    home = HermesHome(tmp_path / "home", "default")
    agent = make_agent(Breaks(Reply("wer.", cost_usd=0.25)), home=home, stream=True)
    sid = agent.run_conversation("go")["session_id"]
    lines = [json.loads(line) for line in (home.logs_dir / "requests.jsonl").read_text().splitlines()]
    assert [(line["session_id"], line["provider"], line["model"], line["outcome"]) for line in lines] == [
        (sid, "p0", "model-0", "incomplete"), (sid, "p0", "model-0", "ok")]
    assert lines[0]["tokens"]["request_count"] == 1 and (lines[1]["cost_usd"], lines[1]["cost_status"]) == (0.25, "actual")
    homeless = make_agent(ScriptedProvider(Reply("fine")), home=object())  # a home without a logs folder logs nothing
    assert homeless.run_conversation("x")["final_response"] == "fine"


def test_a_cut_off_answer_asks_to_continue_as_a_user_message(make_agent) -> None:
    provider = ScriptedProvider(Reply("first half, ", finish_reason="length"), Reply("second half."))
    make_agent(provider).run_conversation("write")
    follow_up = provider.requests[1].messages[-1]
    assert follow_up["role"] == "user" and "cut off" in follow_up["content"]


def test_a_failed_reply_leaves_no_final_text(make_agent) -> None:
    provider = ScriptedProvider(*[Reply("", reasoning="thinking " * 20, finish_reason="length")] * 2)
    result = make_agent(provider).run_conversation("go")
    assert result["failed"] and result["final_response"] == "" and "on reasoning" in result["error"]


def test_a_long_context_tier_refusal_without_a_stated_window_steps_down_to_200k(make_agent) -> None:
    engine = Shrinking(context_length=1_000_000)
    provider = ScriptedProvider(Fault("long_context_tier"), Reply("fits"))
    result = make_agent(provider, engine=engine).run_conversation("long")
    assert result["final_response"] == "fits" and engine.compression_count == 1
    assert (engine.context_length, engine.model) == (200_000, "model-0")  # not the next probe tier (256K)


def test_one_call_repairs_a_reason_once_even_after_a_compression_brings_it_back(make_agent) -> None:
    class Reasoning(Shrinking):
        def compress(self, messages, current_tokens=None, focus_topic=None):
            self.compression_count += 1
            return [{"role": "user", "content": "summary"}, {"role": "assistant", "content": "noted", "reasoning": "r"},
                    *messages[-1:]]  # fmt: skip

    provider = ScriptedProvider(Reply("a", reasoning="r"), Fault("thinking_signature"),
                                Fault("context_overflow", limit=100_000), Fault("thinking_signature"), Reply("never"))  # fmt: skip
    engine = Reasoning(context_length=200_000)
    agent = make_agent(provider, engine=engine)
    agent.run_conversation("one")
    result = agent.run_conversation("two")
    assert result["failed"] and "thinking_signature" in result["error"] and engine.compression_count == 1
    assert len(provider.requests) == 4
