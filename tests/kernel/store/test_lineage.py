"""Branch, compression children, resume and titles numbered along a lineage."""

from __future__ import annotations

import pytest

from hermes.kernel.store import SessionStore, TitleInUseError, sanitize_title


def test_branch_copies_history_links_parent_and_ends_it(store: SessionStore) -> None:
    parent = store.create_session(source="cli", model="m1", system_prompt="sys", title="Refactor auth")
    store.append_messages(parent, [{"role": "user", "content": "a"},
                                   {"role": "assistant", "content": "b", "tool_calls": [{"id": "1"}]}])  # fmt: skip
    child = store.branch(parent)
    p, c = store.get_session(parent), store.get_session(child)
    assert p["end_reason"] == "branched" and p["ended_at"] is not None
    assert c["parent_session_id"] == parent and c["ended_at"] is None
    assert (c["source"], c["model"], c["system_prompt"]) == ("cli", "m1", "sys")
    assert c["title"] == "Refactor auth #2"
    assert c["message_count"] == 2 and c["tool_call_count"] == 1
    assert [m["content"] for m in store.get_messages(child)] == ["a", "b"]
    assert store.get_messages(child)[1]["tool_calls"] == [{"id": "1"}]
    named = store.branch(child, title="Try another way")
    assert store.get_session(named)["title"] == "Try another way"
    lineage = store.lineage(named)
    assert lineage["root_session_id"] == parent
    assert [a["id"] for a in lineage["ancestors"]] == [child, parent]
    assert store.lineage(parent)["children"][0]["id"] == child


def test_compression_chain_numbers_titles_counts_and_resumes_at_the_tip(store: SessionStore) -> None:
    root = store.create_session(title="Refactor auth")
    store.append_message(root, {"role": "user", "content": "original long history"})
    first = store.compression_child(root, [{"role": "user", "content": "summary one"}], system_prompt="rebuilt")
    second = store.compression_child(first, [{"role": "user", "content": "summary two"}])
    assert [store.get_session(s)["title"] for s in (root, first, second)] == [
        "Refactor auth", "Refactor auth #2", "Refactor auth #3",
    ]  # fmt: skip
    assert store.get_session(root)["end_reason"] == "compression"
    assert store.get_session(root)["compression_count"] == 1
    assert store.get_session(first)["system_prompt"] == "rebuilt"
    assert store.usage().compressions == 2
    # The parent keeps its original messages (search keeps finding them).
    assert [m["content"] for m in store.get_messages(root)] == ["original long history"]
    resumed = store.resume(root)
    assert resumed.session["id"] == second
    assert resumed.messages == [{"role": "user", "content": "summary two"}]
    assert store.resume(root, follow_compression=False).session["id"] == root
    assert store.compression_ancestry(second) == [root, first, second]
    assert store.lineage_root(second) == root


def test_resume_does_not_follow_a_branch(store: SessionStore) -> None:
    root = store.create_session()
    store.append_message(root, {"role": "user", "content": "x", "tool_calls": None})
    store.branch(root)
    assert store.resume(root).session["id"] == root


def test_titles_are_sanitised_unique_and_escaped(store: SessionStore) -> None:
    assert sanitize_title("  a\n\tb\x00  c  ") == "a b c"
    assert sanitize_title("   ") is None
    assert len(sanitize_title("x" * 300)) == 100
    a = store.create_session(title="Refactor auth")
    with pytest.raises(TitleInUseError, match="already used"):
        store.create_session(title="Refactor  auth")
    b = store.create_session()
    with pytest.raises(TitleInUseError):
        store.set_title(b, "Refactor auth")
    assert store.set_title(a, "Refactor auth") == "Refactor auth"  # its own title is fine
    # LIKE wildcards in a title are literal: '100%_done' must not count 'Refactor auth #9'-like rows.
    store.set_title(b, "100%_done")
    store.create_session(title="100xydone #7")
    assert store.get_session(store.branch(b))["title"] == "100%_done #2"
    # Numbering continues past the highest existing number in that lineage.
    store.create_session(title="Refactor auth #5")
    assert store.get_session(store.branch(a))["title"] == "Refactor auth #6"
    # A long title keeps room for its number.
    long = store.create_session(title="L" * 100)
    assert store.get_session(store.branch(long))["title"] == "L" * 97 + " #2"
