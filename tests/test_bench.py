"""The benchmarks run and report their figures (speed itself is judged in bench/, not here)."""

from __future__ import annotations

import pytest

from bench import loop


def test_loop_benchmark_reports_overhead_per_step() -> None:
    result = loop.run(runs=3, steps=5)
    assert result["steps"] == 5 and result["tools"] == 30 and result["listeners"] == 3
    assert result["agent_ms_per_step"] > 0 and result["baseline_ms_per_step"] > 0
    difference = result["agent_ms_per_step"] - result["baseline_ms_per_step"]
    assert abs(result["overhead_ms_per_step"] - difference) < 0.002  # each figure is rounded on its own


def test_serve_benchmark_counts_errors_lost_messages_upstream_calls_and_added_latency() -> None:
    from bench import serve

    result = serve.run(sessions=3, turns=2, solo_turns=3)
    assert result["turns_done"] == 6 and result["errors"] == 0 and result["lost_messages"] == 0
    assert result["inprocess_lost"] == 0
    assert result["serve_ms"]["p50"] > 0 and result["inprocess_ms"]["p50"] > 0
    assert result["added_ms"]["p50"] == round(result["serve_ms"]["p50"] - result["inprocess_ms"]["p50"], 1)
    assert set(result["by_turn_ms"]) == {"first", "later"}
    # A tool-using turn is the scripted read_file call and the answer: two upstream calls, never more.
    assert result["upstream_calls_per_turn"] == {"expected": 2, "turns": 6, "histogram": {"2": 6}, "mean": 2, "off": 0, "total": 12}
    tool_less = result["tool_less"]
    assert tool_less["turns_done"] == 6 and tool_less["errors"] == 0 and tool_less["lost_messages"] == 0
    assert tool_less["inprocess_lost"] == 0 and tool_less["serve_ms"]["p99"] > 0
    assert tool_less["added_ms"]["p99"] == round(tool_less["serve_ms"]["p99"] - tool_less["inprocess_ms"]["p99"], 1)
    # A stateless Chat Completions turn without tools: exactly one upstream call.
    assert tool_less["upstream_calls_per_turn"] == {"expected": 1, "turns": 6, "histogram": {"1": 6}, "mean": 1, "off": 0, "total": 6}
    for solo, calls in ((result["solo"], 2), (tool_less["solo"], 1)):  # one client alone, each kind
        assert solo["errors"] == 0 and solo["lost_messages"] == 0 and solo["inprocess_lost"] == 0
        assert solo["upstream_calls_per_turn"]["histogram"] == {str(calls): 3}
        assert solo["added_p50"] == round(solo["serve_p50"] - solo["inprocess_p50"], 1)


def test_the_serve_benchmark_counts_each_upstream_call_for_the_turn_it_belongs_to() -> None:
    """A call the server added (a title, a review) counts for the newest turn in its messages; a missing one as 0."""
    from types import SimpleNamespace

    from bench import serve

    def request(*users: str) -> SimpleNamespace:
        return SimpleNamespace(messages=[{"role": "system", "content": "s"}, *({"role": "user", "content": u} for u in users)])

    t0, t1 = "[chs-00] turn 0: q", "[chs-00] turn 1: q"
    fake = SimpleNamespace(requests=[
        request(t0), request(t0, "[Background memory review — not from the user.]"),  # turn 0 made two calls
        request([{"type": "text", "text": t1}]),  # content parts
        request("warm up"), request("[srv-00] turn 1: q"),  # another phase's, and nobody's
    ])  # fmt: skip
    calls = serve._upstream_calls(fake, "chs", sessions=2, turns=2, kind="chat")
    assert calls == {"expected": 1, "turns": 4, "histogram": {"0": 2, "1": 1, "2": 1}, "mean": 0.75, "off": 3, "total": 3}


def test_serve_slowloris_benchmark_counts_held_and_refused_connections() -> None:
    from bench import serve_slowloris

    result = serve_slowloris.run(attack=100, turns=2)
    assert result["held_by_server"] == 64 and result["answered_429_at_once"] == 36  # serve.max_connections_per_client
    assert result["normal_client_ms"]["attack_p50"] > 0 and result["held_closed_after_s"] is not None


def test_hermes_home_benchmark_imports_everything_and_compares_the_list() -> None:
    from bench import hermes_home

    result = hermes_home.run(runs=3, sessions=40, per_session=4)
    assert result["sessions"] == 40 and result["messages"] == 160
    assert result["import_s"] > 0 and result["reimport_s"] > 0
    # The two times are reported to 0.1 ms, the ratio from the unrounded ones: equal within that rounding.
    assert result["list_ratio"] == pytest.approx(result["list_imported_ms"] / result["list_native_ms"], abs=0.002)


def test_store_benchmark_searches_one_huge_message_of_each_shape() -> None:
    from bench import store

    result = store.huge_message(runs=1, chars=20_000)
    assert result["chars"] == 20_000 and result["target_ms"] == store.HUGE_MESSAGE_TARGET_MS == 1000.0
    cases = {name: r for name, r in result.items() if isinstance(r, dict)}
    assert set(cases) == {"log, a match a line", "one line, words", "one line, substring", "one line, no spaces"}
    for name, case in cases.items():
        assert case["hits"] == 1 and case["highlighted"] and case["p50_ms"] > 0, name
        assert 0 < case["snippet_chars"] < 200 and case["matches"] >= 2, name
    assert cases["one line, words"]["message_chars"] == 20_000 and cases["one line, words"]["matches"] == 2_222


def test_store_write_benchmark_compares_one_writer_with_both_hand_written_schemas() -> None:
    from bench import store_write

    result = store_write.single_writer(full=8, normal=8, rounds=2)
    full, normal = result["FULL"], result["NORMAL"]
    assert full["messages"] == normal["messages"] == 8 and full["rounds"] == 2
    assert full["ratio_vs_1_index"] == round(full["store_per_s"] / full["raw_1_index_per_s"], 3)
    assert full["ratio_vs_2_index"] == round(full["store_per_s"] / full["raw_2_index_per_s"], 3)
    assert normal["ratio_vs_2_index"] == round(normal["store_per_s"] / normal["raw_2_index_per_s"], 3)
    assert min(full["store_wal_mb"], normal["raw_2_index_wal_mb"]) > 0
    # An append: BEGIN, UPDATE, INSERT (+ the word index's trigger), COMMIT; the trigram index is not on it.
    assert result["per_append"]["fts_internal"] < 14
    # 4 appends a burst are fewer than LEAVE_LAG: left to the next writer, which indexes them all.
    left = full["index_left_for_later"]
    assert left["messages"] == 4 and left["ms"] >= 0


def test_store_write_benchmark_counts_every_contended_append(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    from bench import store_write

    for raw in (False, True):
        r = store_write._contending(None, 2, 10, raw=raw)
        assert (r["messages"], r["stored"], r["errors"]) == (20, 20, 0) and r["appends_per_s"] > 0
        assert r["max_ms"] >= r["p99_ms"] >= r["p50_ms"] > 0
    conn = sqlite3.connect(tmp_path / "raw.db")
    store_write.raw_schema(conn, 2)
    triggers = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert triggers == {"messages_fts_ai", "messages_fts_ad", "messages_trigram_ai", "messages_trigram_ad"}


def test_postgresql_store_benchmark_parts_run_and_count_every_append(postgres_cluster) -> None:  # type: ignore[no-untyped-def]
    from bench import store_pg

    contended = store_pg._contending(postgres_cluster, 2, 10, raw=False)
    assert contended["stored"] == contended["messages"] == 20 and contended["sessions_with_gaps"] == 0
    appends = store_pg._appends(postgres_cluster, 20)
    assert appends["messages"] == 20 and appends["ratio"] > 0
    store_pg._build(postgres_cluster, 500)


def test_store_benchmark_loads_a_session_back() -> None:
    from bench import store

    result = store.load_session(40, 1)
    assert result["messages"] == 40 and result["store_ms"] > 0 and result["raw_ms"] > 0


def test_hooks_benchmark_reports_the_added_cost_per_step_for_0_1_and_10_plugins() -> None:
    from bench import hooks

    result = hooks.run(runs=1, steps=20)
    rows = {(r["plugins"], r["hook_timeout"]): r for r in result["rows"]}
    assert set(rows) == {(0, 5.0), (1, 5.0), (10, 5.0), (1, 0.0), (10, 0.0)}
    for row in rows.values():
        assert row["kernel_us_per_step"] > 0 and row["hand_us_per_step"] > 0
        assert abs(row["added_us_per_step"] - (row["kernel_us_per_step"] - row["hand_us_per_step"])) < 0.02
    assert result["empty_added_us"] == rows[(0, 5.0)]["added_us_per_step"]
    # Every listener of the kernel's path heard every step (the hand loop's too).
    fixture = hooks._Fixture(10, 5.0)
    hooks._kernel_steps(fixture, 3)
    assert [one.seen for one in fixture.listeners] == [9] * 10
