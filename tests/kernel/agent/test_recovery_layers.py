"""Reply recovery layers and request repairs, in process over the scripted provider."""

from __future__ import annotations

from hermes.kernel.agent.answers import OUTPUT_CAP, grow_budget, strip_think
from tests.kernel.agent.conftest import echo_tools
from hermes.kernel.agent.repairs import next_tier, repair, sanitize_messages, sanitize_text
from hermes.kernel.testing import Fault, Reply, ToolCall
from hermes.kernel.testing.provider import ScriptedProvider


def test_length_tool_calls_never_run_and_the_budget_doubles(make_agent) -> None:
    ran: list[str] = []
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "x"}, id="c1")], finish_reason="length"),
                                Reply("done"))
    result = make_agent(provider, tools=echo_tools(ran)).run_conversation("go")
    assert result["final_response"] == "done" and ran == []
    assert [r.max_tokens for r in provider.requests] == [4096, 8192]


def test_reasoning_only_is_retried_once_then_a_clear_failure(make_agent) -> None:
    provider = ScriptedProvider(*[Reply("", reasoning="hmm " * 50, finish_reason="length")] * 2)
    result = make_agent(provider).run_conversation("go")
    assert result["failed"] and "on reasoning" in result["error"] and not result["completed"]
    assert [r.max_tokens for r in provider.requests] == [4096, 8192]


def test_budget_growth_is_capped() -> None:
    assert grow_budget(4096) == 8192 and grow_budget(20_000) == OUTPUT_CAP and grow_budget(OUTPUT_CAP) is None


def test_text_continuations_grow_the_budget(make_agent) -> None:
    provider = ScriptedProvider(Reply("one, ", finish_reason="length"), Reply("two, ", finish_reason="length"),
                                Reply("three."))
    result = make_agent(provider).run_conversation("go")
    assert result["final_response"] == "one, two, three."
    assert [r.max_tokens for r in provider.requests] == [4096, 8192, 16384]


def test_thinking_only_prefill_twice_then_earlier_content(make_agent) -> None:
    provider = ScriptedProvider(Reply("", reasoning="It is 4."), Reply("4"))
    result = make_agent(provider).run_conversation("2+2?")
    assert result["final_response"] == "4"
    assert provider.requests[1].messages[-2]["content"].startswith("<think>")
    provider = ScriptedProvider(Reply("Here is the plan.", tool_calls=[ToolCall("echo", {"text": "a"}, id="c1")]),
                                *[Reply("")] * 3)
    result = make_agent(provider).run_conversation("go")
    assert result["final_response"] == "Here is the plan." and result["completed"]


def test_think_tags_are_stripped_into_reasoning() -> None:
    message = {"role": "assistant", "content": "<think>secret</think>\nThe answer."}
    strip_think(message)
    assert message == {"role": "assistant", "content": "The answer.", "reasoning": "secret"}
    unclosed = {"content": "<think>never closed"}
    strip_think(unclosed)
    assert unclosed["content"] is None and unclosed["reasoning"] == "never closed"


def test_grace_call_without_text_fails_with_a_fixed_text(make_agent) -> None:
    provider = ScriptedProvider(Reply(tool_calls=[ToolCall("echo", {"text": "x"}, id="c1")]), Reply(""))
    result = make_agent(provider, max_iterations=1).run_conversation("go")
    assert not result["completed"] and result["failed"] and result["final_response"].startswith("I used every step")


def test_cut_off_answer_continues_then_flags_incomplete(make_agent) -> None:
    from hermes.kernel.providers.base import ModelResponse
    from hermes.kernel.usage import CanonicalUsage

    class Cut(ScriptedProvider):
        def stream(self, request):
            self.requests.append(request)
            yield from ()
            yield ModelResponse({"role": "assistant", "content": "part "}, "incomplete", CanonicalUsage())

    provider = Cut()
    result = make_agent(provider, stream=True).run_conversation("go")
    assert result["incomplete"] and not result["completed"] and result["final_response"] == "part part part "
    assert len(provider.requests) == 3


def test_repairs_and_probe_tiers() -> None:
    signed = [{"role": "assistant", "content": "x", "reasoning": "r", "reasoning_details": [{"signature": "s"}]}]
    assert repair("thinking_signature", signed) == [{"role": "assistant", "content": "x"}]
    image = [{"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "u"}}]}]
    assert repair("image_too_large", image)[0]["content"][1]["type"] == "text"
    tool = [{"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "out"}, {"type": "image"}]}]
    assert repair("multimodal_tool_content", tool)[0]["content"].startswith("out\n[image omitted")
    assert repair("thinking_signature", [{"role": "user", "content": "plain"}]) is None
    assert next_tier(200_000) == 128_000 and next_tier(256_001) == 256_000 and next_tier(8_000) is None


def test_lone_surrogates_never_reach_a_request(make_agent) -> None:
    assert sanitize_text("caf\udce9") == "caf\ufffd"
    clean = [{"role": "user", "content": "fine"}]
    assert sanitize_messages(clean)[0] is clean[0]  # untouched messages are not copied
    provider = ScriptedProvider(Reply("ok"))
    make_agent(provider).run_conversation("bad byte: \udcff")
    provider.requests[-1].messages[-1]["content"].encode("utf-8")  # encodable: no surrogate left


def test_context_overflow_without_a_limit_steps_down_the_probe_tiers(make_agent) -> None:
    from hermes.kernel import ContextEngine

    class Engine(ContextEngine):
        name = "test"
        windows: list[int] = []

        def update_from_response(self, usage):
            pass

        def should_compress(self, prompt_tokens=None):
            return False

        def update_model(self, model, context_length):
            Engine.windows.append(context_length)
            super().update_model(model, context_length)

        def compress(self, messages, current_tokens=None, focus_topic=None):
            return messages[-1:]

    provider = ScriptedProvider(Reply("a"), Fault("context_overflow", message="input is too long for this model: context length exceeded"),
                                Reply("fits"))
    agent = make_agent(provider, engine=Engine(context_length=200_000))
    agent.run_conversation("first")
    assert agent.run_conversation("second")["final_response"] == "fits"
    assert Engine.windows[-1] == 128_000 and agent.engine.context_length == 128_000


def test_every_request_is_logged_with_its_outcome_and_cost_status(make_agent, tmp_path) -> None:
    import json

    from hermes.kernel.home import HermesHome

    home = HermesHome(tmp_path / "home", "default")
    provider = ScriptedProvider(Fault("model_not_found"), Reply("fine"))
    agent = make_agent(provider, ScriptedProvider(Reply("from the fallback")), home=home)
    agent.run_conversation("go")
    lines = [json.loads(line) for line in (home.logs_dir / "requests.jsonl").read_text().splitlines()]
    assert [line["outcome"] for line in lines] == ["error:model_not_found", "ok"]
    ok = [line for line in lines if line["outcome"] == "ok"]
    assert ok and ok[0]["cost_status"] in ("unknown", "estimated") and ok[0]["tokens"]["request_count"] == 1
