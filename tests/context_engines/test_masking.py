"""The masking engine: masked tool outputs first, a deterministic digest past the budget."""

from __future__ import annotations

from typing import Any

from hermes.context_engines.compressor.assembly import HANDOFF_PREFIX
from hermes.context_engines.masking import Masking
from hermes.kernel import PluginHost
from hermes.kernel.testing import validate_messages

from .transcripts import assistant, call, result, user


def chat(turns: int, output_lines: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [user("refactor the store")]
    for i in range(turns):
        messages += [
            assistant(None, call(f"r{i}", "read_file", path=f"store/part{i}.py")),
            result(f"r{i}", f"{i}|code line\n" * output_lines, "read_file"),
            assistant(f"read part {i}"),
            user(f"next part after {i}"),
        ]
    return messages + [assistant("done"), user("now run the tests")]


def test_masks_old_tool_outputs_without_dropping_anything_when_that_is_enough() -> None:
    engine = Masking(context_length=8_000)
    messages = chat(12, 60)
    out = engine.compress(messages)
    validate_messages(out)
    assert len(out) == len(messages) and not any(HANDOFF_PREFIX in str(m["content"]) for m in out)
    assert out[6]["content"] == "[read_file] read store/part1.py from line 1 (720 chars)"
    assert out[-6:] == messages[-6:] and out[:3] == messages[:3]
    assert engine.compression_count == 1


def test_drops_the_middle_behind_a_digest_past_the_budget() -> None:
    engine = Masking(context_length=8_000)
    messages = chat(60, 60)
    out = engine.compress(messages, focus_topic="ignored")
    validate_messages(out)
    assert len(out) < len(messages) // 4 and out[:3] == messages[:3] and out[-1] == user("now run the tests")
    handoff = next(m["content"] for m in out if HANDOFF_PREFIX in str(m["content"]))
    assert "Tools used: read_file ×" in handoff
    assert "store/part50.py" in handoff  # files touched
    assert "Latest user request (verbatim):\nnow run the tests" in handoff
    again = engine.compress(out + [assistant("ran them"), *chat(30, 60)[1:]])
    validate_messages(again)
    assert again[:3] == messages[:3]  # the head stays protected across compressions
    note = next(m["content"] for m in again if m.get("marker") == "handoff")
    assert "Earlier handoff:" in note


def test_masking_is_an_installed_engine_selected_by_name() -> None:
    host = PluginHost(load_plugins="")
    assert {"compressor", "masking"} <= set(host.available("hermes.context_engines"))
    assert host.driver("hermes.context_engines", "masking") is Masking


def test_config_set_switches_the_engine(hermes) -> None:
    assert hermes("config", "set", "context.engine", "masking").returncode == 0
    assert hermes("config", "get", "context.engine").stdout.strip() == "masking"
