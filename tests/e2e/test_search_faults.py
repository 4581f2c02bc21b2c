"""``hermes sessions search`` against what a hostile user types and what hostile text was stored:
every row exits 0 with a JSON list (or the one-line error), leaves the store as it was, and the
next search still finds what it should. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[31mred"


@pytest.fixture
def seeded(store_backend) -> dict[str, str]:
    with store_backend.open() as store:
        sid = store.create_session(source="cli", title="Faults")
        store.append_messages(sid, [
            {"role": "user", "content": "rotate the tokens before Friday"},
            {"role": "assistant", "content": "content: rotate keys; NEAR the end; a OR b"},
            {"role": "user", "content": f"terminal {ESCAPES} tokens here"},
            {"role": "user", "content": "认证模块需要重构"},
        ])  # fmt: skip
    return {"sid": sid}


def _still_works(hermes, store_backend, sid: str) -> None:
    found = json.loads(hermes("sessions", "search", "Friday", "--json").stdout)
    assert [hit["session_id"] for hit in found] == [sid]
    assert store_backend.rows("SELECT count(*) FROM messages") == [(4,)]


HOSTILE = [
    '"unbalanced', 'a OR', "OR", "NOT", "NOT tokens", "tokens NOT", "((tokens", "tokens)", "AND OR (", "*", "**", "-",
    "^tokens", "tokens +", "NEAR(rotate tokens)", "content:rotate", "messages_fts MATCH 'x'",
    "'; DROP TABLE sessions; --", '"" OR ""', "tok*en", "\u2028tokens\u0000", "x" * 100_000, "tokens " * 5_000,
]  # fmt: skip


def test_hostile_queries_answer_a_list_and_change_nothing(hermes, store_backend, seeded) -> None:
    for query in HOSTILE:
        result = hermes("sessions", "search", query.replace("\x00", ""), "--json")
        assert (result.returncode, result.stderr) == (0, ""), query[:40]
        hits = json.loads(result.stdout)
        assert isinstance(hits, list) and all(hit["session_id"] == seeded["sid"] for hit in hits), query[:40]
    _still_works(hermes, store_backend, seeded["sid"])


@pytest.mark.parametrize(("query", "expected"), [
    ("content:rotate", ["content: rotate keys; NEAR the end; a OR b"]),  # a column filter in FTS5; here two words
    ("NEAR rotate", ["content: rotate keys; NEAR the end; a OR b"]),
    ('"a OR b"', ["content: rotate keys; NEAR the end; a OR b"]),  # quoted: the words, not the operator
    ("tokens NOT Friday", [f"terminal {ESCAPES} tokens here"]),
    ("模块", ["认证模块需要重构"]),  # CJK inside a run: the substring index
])  # fmt: skip
def test_operators_and_lookalikes_find_exactly_these(hermes, store_backend, seeded, query: str, expected: list[str]) -> None:
    hits = json.loads(hermes("sessions", "search", query, "--json", "--sort", "time").stdout)
    with store_backend.open() as store:
        content = {m["id"]: m["content"] for m in store.get_messages(seeded["sid"])}
    assert [content[h["message_id"]] for h in hits] == expected


def test_non_utf8_query_bytes_are_one_line_or_a_search(hermes, store_backend, seeded) -> None:
    result = hermes("sessions", "search", b"tok\xffens", "--json")
    assert "Traceback" not in result.stderr
    if result.returncode == 0:
        assert json.loads(result.stdout) == []
    else:
        assert len(result.stderr.strip().splitlines()) == 1
    _still_works(hermes, store_backend, seeded["sid"])


def test_stored_terminal_escapes_are_not_sent_to_the_terminal(hermes, store_backend, seeded) -> None:
    shown = hermes("sessions", "search", "terminal")
    assert shown.returncode == 0, shown.stderr
    assert "terminal" in shown.stdout
    assert "\x1b]0;" not in shown.stdout and "\x07" not in shown.stdout and "\x1b[2J" not in shown.stdout


def test_sessions_show_shows_stored_escapes_without_obeying_them(hermes, store_backend, seeded) -> None:
    shown = hermes("sessions", "show", seeded["sid"])
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    assert "terminal ^[]0;owned^G^[[2J^[[31mred tokens here" in shown.stdout
    exact = json.loads(hermes("sessions", "show", seeded["sid"], "--json").stdout)
    assert f"terminal {ESCAPES} tokens here" in [m["content"] for m in exact["messages"]]
