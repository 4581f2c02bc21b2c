"""The active engine as a hook listener, through its real caller: the agent registers it (issue 20, point 3)."""

from __future__ import annotations

import logging

from hermes.context_engines.compressor import Compressor
from hermes.kernel.testing import Reply, ScriptedProvider


class Ported(Compressor):
    """An engine ported from elsewhere: one override with a foreign signature, one plain override."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.ended: list[tuple[str, int]] = []

    def on_session_switch(self, session_id, reason):  # type: ignore[override]
        raise AssertionError("never called with the kernel's arguments")

    def on_session_end(self, session_id, messages, reason):  # no @hookimpl: the contract's marker carries over
        self.ended.append((reason, len(messages)))


def test_an_engine_with_a_foreign_override_is_named_by_its_class_and_keeps_its_other_hooks(make_agent, caplog) -> None:
    engine = Ported(context_length=128_000, summarizer=None)
    with caplog.at_level(logging.WARNING, logger="hermes.kernel.host"):
        agent = make_agent(ScriptedProvider(Reply("hello")), engine=engine)
    agent.run_conversation("hi")
    agent.new_session()
    assert engine.ended == [("new", 2)]
    assert agent.host.hook_failures == type(agent.host.hook_failures)()  # the skipped hook was never called
    assert [r.getMessage() for r in caplog.records if r.name == "hermes.kernel.host"] == [
        "plugin 'Ported': hook on_session_switch skipped: it takes (session_id, reason) but the spec gives "
        "(old_session_id, new_session_id, reason); session_id is not in the spec; its other hooks still work"
    ]
