"""The kernel's summarizer: auxiliary route first, the finish reason and the summary model's window."""

from __future__ import annotations

from hermes.kernel.agent import ModelRoute
from hermes.kernel.agent.summarizer import make_summarizer
from hermes.kernel.testing import Fault, Reply, ScriptedProvider

from .conftest import scripted_client


def test_the_answer_carries_its_finish_reason_and_the_function_its_window() -> None:
    provider = ScriptedProvider(Reply("## Active Task\nhalf", finish_reason="length"))
    summarize = make_summarizer([ModelRoute(scripted_client(provider), "claude-3-5-haiku")], 16_000)
    text = summarize("system", "prompt", 2_600)
    assert text == "## Active Task\nhalf" and text.finish_reason == "length"
    assert summarize.context_length == 16_000
    assert provider.requests[0].max_tokens == 2_600
    assert make_summarizer([ModelRoute(scripted_client(provider), "gpt-4o")]).context_length > 16_000  # from the table


def test_a_failed_auxiliary_route_falls_back_to_the_main_one_once() -> None:
    aux = ScriptedProvider(Fault("server_error"))
    main = ScriptedProvider(Reply("note"))
    summarize = make_summarizer([ModelRoute(scripted_client(aux, "aux"), "small"), ModelRoute(scripted_client(main, "main"), "big")])
    assert summarize("s", "p", 100) == "note" and len(main.requests) == 1
