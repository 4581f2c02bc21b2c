"""Local session titles: made from the first request, stored with the turn, never by a model call."""

from __future__ import annotations

import pytest

from hermes.kernel import PluginHost
from hermes.kernel.agent.factory import build_agent
from hermes.kernel.agent.titles import LocalTitle, local_title
from hermes.kernel.testing import Reply, ScriptedProvider


@pytest.mark.parametrize(("text", "title"), [
    ("fix  the\tlogin\nbutton", "fix the login button"),
    ("a" * 60, "a" * 60),
    ("word " * 20, "word word word word word word word word word word word…"),
    ("x" * 70, "x" * 57 + "…"),
    ("  \n\t ", None),
])  # fmt: skip
def test_local_title_is_one_clean_line_cut_at_a_word(text: str, title: str | None) -> None:
    assert local_title(text) == title


def test_local_title_names_the_session_after_its_first_request_and_keeps_a_given_title(make_agent, store) -> None:
    provider = ScriptedProvider(Reply("first answer"), Reply("second answer"))
    agent = make_agent(provider)
    agent.reviews.append(LocalTitle())
    sid = agent.run_conversation("why does the nightly build fail")["session_id"]
    assert store.get_session(sid)["title"] == "why does the nightly build fail"
    assert len(provider.requests) == 1  # the answer only
    store.set_title(sid, "Nightly build")
    agent.run_conversation("and on arm64?")
    assert store.get_session(sid)["title"] == "Nightly build"  # a title once set is kept


def test_a_taken_local_title_gets_the_session_id_appended(make_agent, store) -> None:
    taken = store.create_session()
    store.set_title(taken, "hello")
    agent = make_agent(ScriptedProvider(Reply("hi")))
    agent.reviews.append(LocalTitle())
    sid = agent.run_conversation("hello")["session_id"]
    assert store.get_session(sid)["title"] == f"hello ({sid[-6:]})"


def test_build_agent_refuses_an_unknown_title_mode() -> None:
    with pytest.raises(ValueError, match=r"^auto_title must be 'model' or 'local', not 'remote'$"):
        build_agent(host=PluginHost(load_plugins=""), config=None, home=None, auto_title="remote")  # type: ignore[arg-type]
