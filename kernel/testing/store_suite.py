"""The conformance suite every session store backend runs (ours and third parties').

Subclass :class:`SessionStoreConformance` in a test module and give it a
``make_store`` fixture: a callable that opens a store on one fresh, empty
database per test (each call a new handle on the *same* database)::

    from hermes.kernel.testing.store_suite import SessionStoreConformance

    class TestMyStore(SessionStoreConformance):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyStore(f"mydb://{tmp_path}/db")

pytest collects every ``test_*`` method below for that class, those of
:class:`~hermes.kernel.testing.store_search.SearchConformance` (full-text and
substring search) and those of
:class:`~hermes.kernel.testing.store_tenants.TenantConformance` (tenant
isolation, paging; its ``make_previous_schema_store`` fixture is worth
overriding for a backend with older schemas). The suite speaks only the
:class:`~hermes.kernel.store.SessionStore` contract; see docs/session-stores.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ..errors import HermesError
from ..store import SessionNotFoundError, SessionStore, TitleInUseError, strip_images
from ..usage import CanonicalUsage, CostResult
from .store_search import CALLS, NASTY_QUERIES, SearchConformance, seed_search_corpus
from .store_tenants import TenantConformance

__all__ = ["NASTY_QUERIES", "SessionStoreConformance", "seed_search_corpus"]

class SessionStoreConformance(TenantConformance, SearchConformance):
    """The behaviour every backend shares. Needs a ``make_store`` fixture (see the module docstring)."""

    @pytest.fixture
    def store(self, make_store: Callable[[], SessionStore]) -> Iterator[SessionStore]:
        s = make_store()
        try:
            yield s
        finally:
            s.close()

    # -- sessions ------------------------------------------------------------------

    def test_create_get_list_and_resolve(self, store: SessionStore) -> None:
        a = store.create_session(source="api", model="gpt-x", system_prompt="Be terse.")
        b = store.create_session(source="cli", session_id="20990101_000000_abcdef")
        row = store.get_session(a)
        assert (row["source"], row["model"], row["system_prompt"], row["message_count"]) == ("api", "gpt-x", "Be terse.", 0)
        assert store.get_session("missing") is None
        with pytest.raises(SessionNotFoundError):
            store.require_session("missing")
        assert [s["id"] for s in store.list_sessions(source="api")] == [a]
        assert {s["id"] for s in store.list_sessions(limit=None)} == {a, b}
        assert store.resolve_session_id("20990101_000000_ab") == b
        with pytest.raises(SessionNotFoundError):
            store.resolve_session_id("zzz")
        store.end_session(a, "user_exit")
        assert store.get_session(a)["end_reason"] == "user_exit" and store.get_session(a)["ended_at"] is not None
        with pytest.raises(SessionNotFoundError):
            store.end_session("missing", "user_exit")

    def test_an_ambiguous_prefix_is_refused(self, store: SessionStore) -> None:
        store.create_session(session_id="20990101_000000_aaaaaa")
        store.create_session(session_id="20990101_000000_aaaaab")
        with pytest.raises(HermesError, match="ambiguous"):
            store.resolve_session_id("20990101_000000_aaaaa")

    def test_a_second_handle_sees_every_write(self, store: SessionStore, make_store: Callable[[], SessionStore]) -> None:
        sid = store.create_session(title="shared")
        store.append_message(sid, {"role": "user", "content": "hello from the first handle"})
        with make_store() as other:
            assert other.get_session(sid)["title"] == "shared"
            assert [m["content"] for m in other.get_messages(sid)] == ["hello from the first handle"]
            other.append_message(sid, {"role": "assistant", "content": "and back"})
        assert store.get_session(sid)["message_count"] == 2

    # -- messages ------------------------------------------------------------------

    def test_messages_round_trip_with_every_column(self, store: SessionStore) -> None:
        sid = store.create_session()
        parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 400}}]
        ids = store.append_messages(sid, [
            {"role": "user", "content": "hi \x00 there \ud800", "timestamp": 100.5},
            {"role": "assistant", "content": None, "tool_calls": CALLS, "reasoning": "think", "finish_reason": "tool_calls", "token_count": 7},
            {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "print(1)"},
            {"role": "user", "content": parts},
        ])  # fmt: skip
        assert ids == sorted(ids) and len(set(ids)) == 4
        messages = store.get_messages(sid)
        assert [m["id"] for m in messages] == ids
        assert messages[0]["content"] == "hi \x00 there \ud800" and messages[0]["timestamp"] == 100.5
        assert messages[1]["tool_calls"] == CALLS and messages[1]["reasoning"] == "think"
        assert (messages[1]["finish_reason"], messages[1]["token_count"]) == ("tool_calls", 7)
        assert (messages[2]["tool_name"], messages[2]["tool_call_id"]) == ("read_file", "c1")
        assert messages[3]["content"] == strip_images(parts) and "AAAA" not in str(messages[3]["content"])
        row = store.get_session(sid)
        assert (row["message_count"], row["tool_call_count"]) == (4, 1)

    def test_append_is_all_or_nothing(self, store: SessionStore) -> None:
        with pytest.raises(SessionNotFoundError):
            store.append_messages("missing", [{"role": "user", "content": "lost?"}])
        sid = store.create_session()
        with pytest.raises(Exception):
            store.append_messages(sid, [{"role": "user", "content": "fine"}, {"content": "no role"}])
        assert store.get_messages(sid) == [] and store.get_session(sid)["message_count"] == 0
        assert store.counts() == {"sessions": 1, "messages": 0}

    def test_a_write_that_fails_midway_changes_nothing(self, store: SessionStore) -> None:
        # The child insert fails after the parent was already ended: the whole write must roll back.
        parent = store.create_session(title="Task")
        store.append_message(parent, {"role": "user", "content": "keep me"})
        taken = store.create_session()
        with pytest.raises(Exception):
            store.compression_child(parent, [{"role": "user", "content": "summary"}], child_id=taken)
        row = store.get_session(parent)
        assert (row["ended_at"], row["end_reason"], row["compression_count"]) == (None, None, 0)
        assert store.lineage(parent)["children"] == [] and store.resume(parent).session["id"] == parent
        assert store.counts() == {"sessions": 2, "messages": 1}

    def test_threads_with_their_own_handles_lose_nothing(self, store: SessionStore, make_store: Callable[[], SessionStore]) -> None:
        sid = store.create_session()
        errors: list[BaseException] = []

        def writer(n: int) -> None:
            try:
                with make_store() as own:
                    for i in range(25):
                        own.append_message(sid, {"role": "user", "content": f"w{n} m{i}"})
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        contents = [m["content"] for m in store.get_messages(sid)]
        assert len(contents) == len(set(contents)) == 100 and store.get_session(sid)["message_count"] == 100
        for n in range(4):  # each writer's messages in its own order
            assert [c for c in contents if c.startswith(f"w{n} ")] == [f"w{n} m{i}" for i in range(25)]

    # -- titles and lineage --------------------------------------------------------

    def test_titles_are_sanitised_unique_and_numbered(self, store: SessionStore) -> None:
        a = store.create_session(title="  Refactor\n auth  ")
        assert store.get_session(a)["title"] == "Refactor auth"
        with pytest.raises(TitleInUseError):
            store.create_session(title="Refactor auth")
        b = store.branch(a)
        c = store.compression_child(b, [{"role": "user", "content": "summary"}])
        assert [store.get_session(x)["title"] for x in (b, c)] == ["Refactor auth #2", "Refactor auth #3"]
        with pytest.raises(TitleInUseError):
            store.set_title(c, "Refactor auth #2")
        assert store.set_title(c, "  ") is None and store.get_session(c)["title"] is None
        with pytest.raises(SessionNotFoundError):
            store.set_title("missing", "x")

    def test_branch_copies_history_and_lineage_links(self, store: SessionStore) -> None:
        root = store.create_session(title="Root")
        store.append_messages(root, [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two", "tool_calls": CALLS}])
        child = store.branch(root)
        assert [m["content"] for m in store.get_messages(child)] == ["one", "two"]
        assert store.get_session(child)["tool_call_count"] == 1 and store.get_session(child)["message_count"] == 2
        assert store.get_session(root)["end_reason"] == "branched"
        store.append_message(child, {"role": "user", "content": "three"})
        assert len(store.get_messages(root)) == 2 and len(store.get_messages(child)) == 3
        lineage = store.lineage(child)
        assert lineage["root_session_id"] == root and lineage["ancestors"] == [{"id": root, "end_reason": "branched"}]
        assert [c["id"] for c in store.lineage(root)["children"]] == [child]
        assert store.lineage_root(child) == root
        with pytest.raises(SessionNotFoundError):
            store.branch("missing")

    def test_one_writer_lease_per_session(self, store: SessionStore, make_store: Callable[[], SessionStore]) -> None:
        sid, other = store.create_session(), store.create_session()
        first = store.claim_writer(sid)
        assert first.granted and first.session_id == sid
        second_handle = make_store()
        try:
            second = second_handle.claim_writer(sid)
            if not store.writer_leases:  # a backend without leases grants every claim, and says so
                assert second.granted and not second.enforced
                return
            assert not second.granted and second.enforced and "hermes" in (second.holder or "")
            elsewhere = second_handle.claim_writer(other)
            assert elsewhere.granted  # leases are per session
            elsewhere.release()
            first.release()
            first.release()  # idempotent
            third = second_handle.claim_writer(sid)
            assert third.granted
            refused = store.claim_writer(sid)
            assert not refused.granted
            refused.release()  # a refused claim has nothing to release
            third.release()
            store.claim_writer(sid).release()
        finally:
            second_handle.close()

    def test_compression_chain_resumes_at_its_tip(self, store: SessionStore) -> None:
        first = store.create_session(title="Long task", system_prompt="old prompt")
        store.append_messages(first, [{"role": "user", "content": f"m{i}"} for i in range(5)])
        second = store.compression_child(first, [{"role": "user", "content": "summary"}], system_prompt="new prompt")
        third = store.compression_child(second, [{"role": "user", "content": "summary 2"}], child_id="20990101_000000_cccccc")
        assert third == "20990101_000000_cccccc"
        assert store.compression_ancestry(third) == [first, second, third]
        conversation = store.resume(first)
        assert conversation.session["id"] == third
        assert conversation.messages == [{"role": "user", "content": "summary 2"}]
        assert store.resume(first, follow_compression=False).session["id"] == first
        assert len(store.resume(first, follow_compression=False).messages) == 5
        assert store.get_session(first)["compression_count"] == 1 and store.get_session(second)["system_prompt"] == "new prompt"
        with pytest.raises(SessionNotFoundError):
            store.resume("missing")

    def test_resume_picks_the_newest_of_several_compression_children_never_a_branch(self, store: SessionStore) -> None:
        root = store.create_session(title="Multi")
        store.append_message(root, {"role": "user", "content": "original"})
        # A branch first (root ends "branched"), then two compressions of the same session: root
        # ends "compression" and has three children. Explicit ids, ascending, so even a clock
        # that gives both compression children the same started_at has one right answer.
        branch = store.branch(root)
        older = store.compression_child(root, [{"role": "user", "content": "older summary"}], child_id="20990101_000000_00000b")
        newer = store.compression_child(root, [{"role": "user", "content": "newer summary"}], child_id="20990101_000000_00000c")
        assert [c["id"] for c in store.lineage(root)["children"]] == [branch, older, newer]
        conversation = store.resume(root)
        assert conversation.session["id"] == newer and conversation.messages == [{"role": "user", "content": "newer summary"}]
        assert store.get_session(root)["compression_count"] == 2 and store.get_session(root)["end_reason"] == "compression"
        assert store.resume(branch).session["id"] == branch  # a branch is its own conversation
        assert store.resume(older).session["id"] == older  # an open child resumes as itself
        assert store.compression_ancestry(newer) == [root, newer]
        assert store.branch(root) != branch and store.get_session(newer)["end_reason"] == "branched"  # from the tip

    def test_resume_follows_a_compressed_child_to_the_newest_tip(self, store: SessionStore) -> None:
        root = store.create_session(title="Deep")
        child = store.compression_child(root, [{"role": "user", "content": "summary 1"}], child_id="20990101_000000_0000a1")
        # The child itself was compressed twice, and the newer of those once more.
        store.compression_child(child, [{"role": "user", "content": "summary 2a"}], child_id="20990101_000000_0000a2")
        later = store.compression_child(child, [{"role": "user", "content": "summary 2b"}], child_id="20990101_000000_0000a3")
        tip = store.compression_child(later, [{"role": "user", "content": "summary 3"}], child_id="20990101_000000_0000a4")
        for start in (root, child, later, tip):
            conversation = store.resume(start)
            assert conversation.session["id"] == tip and conversation.messages == [{"role": "user", "content": "summary 3"}]
        assert store.compression_ancestry(tip) == [root, child, later, tip]
        assert store.resume(child, follow_compression=False).session["id"] == child

    def test_equal_start_times_order_by_id_the_same_every_time(self, store: SessionStore, make_store: Callable[[], SessionStore]) -> None:
        # Only an import sets started_at: three children of one compressed session, two started at the same instant.
        def row(sid: str, started: float, parent: str | None, end_reason: str | None) -> dict[str, Any]:
            return {"id": sid, "source": "cli", "started_at": started, "parent_session_id": parent, "end_reason": end_reason,
                    "ended_at": started + 1 if end_reason else None, "title": None}  # fmt: skip

        parent = "20990101_000000_0000f0"
        early, tie_low, tie_high = "20990101_000000_0000f9", "20990101_000000_0000f1", "20990101_000000_0000f2"
        batch = [(row(parent, 1000.0, None, "compression"), [{"role": "user", "content": "old"}]),
                 (row(tie_high, 2000.0, parent, None), [{"role": "user", "content": "high"}]),
                 (row(early, 1500.0, parent, None), [{"role": "user", "content": "early"}]),
                 (row(tie_low, 2000.0, parent, None), [{"role": "user", "content": "low"}])]  # fmt: skip
        assert sorted(store.import_sessions(batch).imported) == sorted(r["id"] for r, _ in batch)
        with make_store() as other:
            for handle in (store, other, store):
                assert handle.resume(parent).session["id"] == tie_high  # the newest start, then the greatest id
                assert handle.resume(parent).messages == [{"role": "user", "content": "high"}]
                assert [c["id"] for c in handle.lineage(parent)["children"]] == [early, tie_low, tie_high]
                assert [s["id"] for s in handle.list_sessions(limit=None)] == [tie_high, tie_low, early, parent]

    def test_resume_returns_chat_messages(self, store: SessionStore) -> None:
        sid = store.create_session()
        store.append_messages(sid, [
            {"role": "assistant", "content": None, "tool_calls": CALLS, "reasoning": "r", "finish_reason": "tool_calls"},
            {"role": "tool", "tool_call_id": "c1", "tool_name": "read_file", "content": "x"},
        ])  # fmt: skip
        assert store.resume(sid).messages == [
            {"role": "assistant", "content": None, "tool_calls": CALLS, "reasoning": "r"},
            {"role": "tool", "content": "x", "tool_call_id": "c1", "tool_name": "read_file"},
        ]

    def test_markers_survive_storage_copies_imports_and_resume(self, store: SessionStore) -> None:
        # Engines find their handoff note by its marker, never by its text (see MARKER_KEY).
        sid = store.create_session(title="Marked")
        note = {"role": "user", "content": "[CONTEXT HANDOFF] the note", "marker": "handoff"}
        store.append_messages(sid, [note, {"role": "assistant", "content": "plain"}])
        assert [m["marker"] for m in store.get_messages(sid)] == ["handoff", None]
        branch = store.branch(sid)
        assert [m["marker"] for m in store.get_messages(branch)] == ["handoff", None]
        child = store.compression_child(branch, [{**note, "content": "newer note"}, {"role": "user", "content": "go on"}])
        assert [m["marker"] for m in store.get_messages(child)] == ["handoff", None]
        # A resume (one read, straight to chat messages) keeps the marker too.
        assert store.resume(sid).messages == [note, {"role": "assistant", "content": "plain"}]
        assert store.resume(branch).messages[0] == {**note, "content": "newer note"}  # the compression tip
        assert [m.get("marker") for m in store.resume(branch, follow_compression=False).messages] == ["handoff", None]
        session = store.get_session(sid)
        copy = {**session, "id": "20990101_000000_00000a", "title": "Marked copy", "parent_session_id": None}
        assert store.import_sessions([(copy, store.get_messages(sid))]).imported == [copy["id"]]
        assert [m["marker"] for m in store.get_messages(copy["id"])] == ["handoff", None]

    def test_compaction_records(self, store: SessionStore) -> None:
        first = store.create_session()
        second = store.compression_child(first, [{"role": "user", "content": "summary"}])
        assert store.compaction(first) is None and store.compaction(second) is None
        details = {"score": 0.5, "missing": ["src/app.py"], "note": "naïve 日本語 \x00"}
        store.record_compaction(
            second, parent_session_id=first, engine="compressor", fidelity=0.5, missing=["src/app.py", "ERR-42"],
            handoff="## Active Task\nfix ERR-42 in src/app.py", details=details,
        )  # fmt: skip
        record = store.compaction(second)
        assert record is not None and record["created_at"] > 0
        assert {k: record[k] for k in ("session_id", "parent_session_id", "engine", "fidelity", "edited")} == {
            "session_id": second, "parent_session_id": first, "engine": "compressor", "fidelity": 0.5, "edited": False}  # fmt: skip
        assert record["missing"] == ["src/app.py", "ERR-42"] and record["handoff"].startswith("## Active Task\n")
        assert record["details"]["score"] == 0.5 and record["details"]["note"].startswith("naïve 日本語")
        assert store.compaction(first)["session_id"] == second  # the one that ended it
        # Review edits the note: the record is replaced, not duplicated.
        store.record_compaction(second, parent_session_id=first, engine="compressor", fidelity=None, handoff="edited", edited=True)
        record = store.compaction(second)
        assert (record["handoff"], record["edited"], record["fidelity"], record["missing"], record["details"]) == (
            "edited", True, None, [], {})  # fmt: skip
        third = store.compression_child(second, [{"role": "user", "content": "summary 2"}])
        store.record_compaction(third, parent_session_id=second, engine="masking", fidelity=1.0, created_at=1234.5)
        assert store.compaction(second)["session_id"] == second and store.compaction(third)["engine"] == "masking"
        assert store.compaction(third)["created_at"] == 1234.5  # a copied record keeps its time
        store.delete_session(third)
        assert store.compaction(third) is None and store.compaction(second)["session_id"] == second
        with pytest.raises(TypeError):
            store.record_compaction(second, parent_session_id=first, engine="x", fidelity=None, bogus=1)  # type: ignore[call-arg]

    def test_delete_relinks_children_and_prune_removes_idle(self, store: SessionStore) -> None:
        a = store.create_session()
        b = store.branch(a)
        c = store.branch(b)
        store.append_message(b, {"role": "user", "content": "gone soon"})
        store.delete_session(b)
        assert store.get_session(b) is None and store.get_session(c)["parent_session_id"] == a
        assert store.search("gone") == []
        with pytest.raises(SessionNotFoundError):
            store.delete_session(b)
        assert store.prune(0) == []  # nothing active within the last hour
        assert store.prune(0, now=10**12) == [a]  # a ended by branching; c is open, so it stays
        store.end_session(c, "user_exit")
        assert store.prune(0, now=10**12) == [c]
        assert store.counts() == {"sessions": 0, "messages": 0}
        with pytest.raises(HermesError):
            store.prune(-1)

    def test_ending_again_moves_ended_at_and_a_compressed_session_branches_from_its_tip(self, store: SessionStore) -> None:
        a = store.create_session()
        store.end_session(a, "user_exit")
        first = store.get_session(a)["ended_at"]
        store.end_session(a, "resumed_other")
        assert store.get_session(a)["ended_at"] >= first and store.get_session(a)["end_reason"] == "resumed_other"
        root = store.create_session()
        store.append_message(root, {"role": "user", "content": "old"})
        tip = store.compression_child(root, system_prompt="s", messages=[{"role": "user", "content": "summary"}])
        branched = store.branch(root)
        assert store.get_session(root)["end_reason"] == "compression"  # branching keeps the reason
        assert store.get_session(branched)["parent_session_id"] == tip

    # -- usage ---------------------------------------------------------------------

    def test_usage_accumulates_with_an_honest_status(self, store: SessionStore) -> None:
        sid, idle = store.create_session(), store.create_session()
        store.record_usage(sid, CanonicalUsage(100, 20, 300, 40, 5, 1), CostResult(0.01, "actual"))
        store.record_usage(sid, CanonicalUsage(1, 2, 3, 4, 5, 0), CostResult(0.002, "estimated"))
        row = store.get_session(sid)
        assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"], row["api_call_count"]) == (101, 22, 303, 2)
        assert store.usage(sid).cost == CostResult(0.012, "estimated")
        store.record_usage(sid, CanonicalUsage(1, 1, request_count=1), CostResult(None, "unknown"))
        assert store.usage(sid).cost_status == "unknown" and store.usage(sid).known_cost_usd == pytest.approx(0.012)
        total = store.usage()
        assert total.sessions == 2 and total.api_calls == 3 and store.usage(idle).cost is None
        with pytest.raises(SessionNotFoundError):
            store.record_usage("missing", CanonicalUsage())
        with pytest.raises(SessionNotFoundError):
            store.usage("missing")

    # -- export and bulk copy ------------------------------------------------------

    def test_export(self, store: SessionStore) -> None:
        sid = store.create_session(title="Exported")
        store.append_messages(sid, [{"role": "user", "content": "question"}, {"role": "assistant", "content": "answer"}])
        lines = store.export(sid).splitlines()
        assert len(lines) == 3 and '"Exported"' in lines[0] and '"answer"' in lines[2]
        assert store.export(sid, "markdown").startswith("# Exported")
        with pytest.raises(HermesError):
            store.export(sid, "pdf")

    def test_bulk_import_renumbers_a_title_taken_by_another_session_once(self, store: SessionStore) -> None:
        mine = store.create_session(title="Plan")
        long_title = "L" * 100
        store.create_session(title=long_title)

        def row(n: int, title: str | None, parent: str | None = None) -> dict[str, Any]:
            return {"id": f"20990101_000000_0000{n:02d}", "source": "cli", "started_at": 1000.0 + n, "title": title,
                    "parent_session_id": parent}  # fmt: skip

        plan, plan2 = row(1, "Plan"), row(2, "Plan #2", parent="20990101_000000_000001")
        dup_a, dup_b, other, untitled, long = row(3, "Dup"), row(4, "Dup"), row(5, "Other"), row(6, None), row(7, long_title)
        say = [{"role": "user", "content": "imported plan words"}, {"role": "assistant", "content": "ok"}]
        batch = [(plan, say), (plan2, say[:1]), (dup_a, []), (dup_b, say), (other, say), (untitled, []), (long, say)]
        result = store.import_sessions(batch)
        assert result.imported == [r["id"] for r, _ in batch] and (result.skipped, result.conflicts) == ([], [])
        # The lineage's next free numbers, in batch order; a session the target does not have is never a conflict.
        renumbered_long = "L" * 97 + " #2"
        assert result.renamed == {plan["id"]: "Plan #2", plan2["id"]: "Plan #3", dup_b["id"]: "Dup #2", long["id"]: renumbered_long}
        titles = {r["id"]: store.get_session(r["id"])["title"] for r, _ in batch}
        assert titles == {plan["id"]: "Plan #2", plan2["id"]: "Plan #3", dup_a["id"]: "Dup", dup_b["id"]: "Dup #2",
                          other["id"]: "Other", untitled["id"]: None, long["id"]: renumbered_long}  # fmt: skip
        assert store.get_session(mine)["title"] == "Plan" and store.get_messages(mine) == []
        assert [m["content"] for m in store.get_messages(plan["id"])] == ["imported plan words", "ok"]
        assert store.counts() == {"sessions": 9, "messages": 9}
        # Again: every session is found by its id and skipped; nothing is renumbered twice.
        again = store.import_sessions(batch)
        assert (again.imported, again.renamed, again.conflicts) == ([], {}, []) and again.skipped == result.imported
        assert {r["id"]: store.get_session(r["id"])["title"] for r, _ in batch} == titles
        assert store.counts() == {"sessions": 9, "messages": 9}
        # The same id with another number of messages stays a conflict, whatever its title.
        clash = store.import_sessions([(plan, say[:1]), ({**other, "title": "Plan"}, [])])
        assert (clash.conflicts, clash.renamed, clash.imported) == ([plan["id"], other["id"]], {}, [])
        # The next compression or branch numbers on past the imported titles.
        assert store.get_session(store.branch(mine))["title"] == "Plan #4"
        # A long title cut to fit its number starts a lineage of the cut base: numbering goes on there.
        longer = store.import_sessions([(row(8, long_title), [])])
        assert longer.renamed == {row(8, None)["id"]: "L" * 97 + " #3"}

    def test_bulk_import_is_idempotent_and_keeps_everything(self, store: SessionStore) -> None:
        parent: dict[str, Any] = {
            "id": "20990101_000000_000001", "source": "cli", "model": "m", "system_prompt": "p", "parent_session_id": None,
            "started_at": 1000.0, "ended_at": 2000.0, "end_reason": "compression", "title": "Imported", "message_count": 2,
            "tool_call_count": 1, "api_call_count": 3, "compression_count": 1, "input_tokens": 10, "output_tokens": 5,
            "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0, "estimated_cost_usd": 0.5,
            "cost_status": "actual", "updated_at": 2000.0,
        }  # fmt: skip
        child = {**parent, "id": "20990101_000000_000002", "parent_session_id": parent["id"], "title": "Imported #2",
                 "end_reason": None, "ended_at": None, "message_count": 1, "tool_call_count": 0}  # fmt: skip
        messages = [{"role": "user", "content": "imported words", "timestamp": 1500.0},
                    {"role": "assistant", "content": None, "tool_calls": CALLS, "timestamp": 1600.0}]  # fmt: skip
        batch = [(child, [{"role": "user", "content": "summary", "timestamp": 2100.0}]), (parent, messages)]
        result = store.import_sessions(batch)  # a child before its parent is fine
        assert sorted(result.imported) == [parent["id"], child["id"]] and result.skipped == []
        again = store.import_sessions(batch)
        assert again.imported == [] and sorted(again.skipped) == [parent["id"], child["id"]]
        row = store.get_session(parent["id"])
        assert {k: row[k] for k in parent} == parent
        assert [m["timestamp"] for m in store.get_messages(parent["id"])] == [1500.0, 1600.0]
        assert store.resume(parent["id"]).session["id"] == child["id"]
        assert store.search("imported")[0].root_title == "Imported"
        assert store.usage(parent["id"]).api_calls == 3
        assert store.counts() == {"sessions": 2, "messages": 3}
        # A diverged copy is a conflict, left as it is.
        clash = store.import_sessions([(parent, messages[:1])])
        assert clash.conflicts == [parent["id"]] and len(store.get_messages(parent["id"])) == 2
        assert store.session_ids(limit=1) == [parent["id"]] and store.session_ids(after=parent["id"]) == [child["id"]]
