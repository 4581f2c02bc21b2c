"""``hermes sessions search`` over huge messages (issue 27): a stored 400 KB log with 20,000
matches and one line of a million characters are found, each with a short snippet that marks
the match. Before, the log took 107 s of CPU and the line had not answered after ten minutes;
speed is measured in ``python -m bench store`` (huge message), never asserted here. Both backends."""

from __future__ import annotations

import json

LOG = "\n".join(f"2026-12-01 10:{i // 600 % 60:02d}:{i % 60:02d} worker-{i % 7} error: step {i} failed" for i in range(20_000))
LINE = ("timeout " * 125_000)[:1_000_000]  # no newline: one line


def test_a_huge_log_and_a_million_character_line_are_found_with_short_marked_snippets(hermes, store_backend) -> None:
    assert len(LOG) > 400_000 and LOG.count("error") == 20_000 and len(LINE) == 1_000_000
    with store_backend.open() as store:
        sid = store.create_session(source="cli", title="Huge output")
        log_id, line_id = store.append_messages(sid, [
            {"role": "tool", "tool_call_id": "c1", "tool_name": "terminal", "content": LOG},
            {"role": "tool", "tool_call_id": "c2", "tool_name": "terminal", "content": LINE},
        ])  # fmt: skip
    cases = [
        ("error", log_id, "**error**"),  # a word on 20,000 lines
        ("timeout", line_id, "**timeout**"),  # a word 125,000 times on one line
        ("imeou", line_id, "**imeou**"),  # part of a word: the substring path
        ("worker error", log_id, "**error**"),
    ]
    for query, message_id, mark in cases:
        result = hermes("sessions", "search", query, "--json")
        assert result.returncode == 0, (query, result.stderr)
        hits = json.loads(result.stdout)
        assert [h["message_id"] for h in hits] == [message_id], query
        snippet = hits[0]["snippet"]
        assert mark in snippet and len(snippet) < 300, (query, snippet)
    people = hermes("sessions", "search", "error")
    assert people.returncode == 0 and people.stdout.count("\n") == 1 and "**error**" in people.stdout
    assert f"#{log_id} tool:" in people.stdout and len(people.stdout) < 400
