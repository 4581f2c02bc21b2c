"""Tenants in the store conformance suite: what one tenant may see of the others' sessions (nothing).

:class:`TenantConformance` is part of
:class:`~hermes.kernel.testing.store_suite.SessionStoreConformance`, so every
backend runs it. It needs the suite's ``make_store`` fixture and
``make_previous_schema_store``: a callable opening a store on a database that
the backend's schema before tenants wrote, holding :data:`LEGACY_SESSION_ID`
with one message of :data:`LEGACY_TEXT`. The default imports such a row
without a ``tenant`` key (right for a backend that never had an older schema);
a backend with migrations overrides it with a real pre-migration database, as
``tests/kernel/store/test_conformance.py`` does for SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ..store import SessionStore, TitleInUseError

__all__ = ["LEGACY_SESSION_ID", "LEGACY_TEXT", "TenantConformance"]

#: The session a database from before tenants holds, and the text of its one message.
LEGACY_SESSION_ID = "20240101_000000_01d5e5"
LEGACY_TEXT = "legacy heliotrope notes from before tenants"


def _row(sid: str, started: float, tenant: str | None, **extra: Any) -> dict[str, Any]:
    row = {"id": sid, "source": "api", "started_at": started, "title": None, "parent_session_id": None}
    if tenant is not None:
        row["tenant"] = tenant
    return {**row, **extra}


class TenantConformance:
    """Tenant isolation, paging and inheritance; mixed into the store suite."""

    @pytest.fixture
    def make_previous_schema_store(self, make_store: Callable[[], SessionStore]) -> Callable[[], SessionStore]:
        def make() -> SessionStore:
            store = make_store()
            message = {"role": "user", "content": LEGACY_TEXT, "timestamp": 1000.0}
            store.import_sessions([(_row(LEGACY_SESSION_ID, 1000.0, None, source="cli", title="Legacy"), [message])])
            return store

        return make

    def test_a_session_carries_its_tenant(self, store: SessionStore) -> None:
        plain = store.create_session()
        owned = store.create_session(source="api", tenant="acme")
        assert store.get_session(plain)["tenant"] is None and store.get_session(owned)["tenant"] == "acme"
        assert {s["id"]: s["tenant"] for s in store.list_sessions(limit=None)} == {plain: None, owned: "acme"}
        assert store.resume(owned).session["tenant"] == "acme"

    def test_list_sessions_shows_a_tenant_only_its_own(self, store: SessionStore) -> None:
        a1 = store.create_session(source="api", tenant="a")
        b1 = store.create_session(source="api", tenant="b")
        a2 = store.create_session(source="cli", tenant="a")
        loose = store.create_session(source="api")
        assert {s["id"] for s in store.list_sessions(tenant="a", limit=None)} == {a1, a2}
        assert [s["id"] for s in store.list_sessions(tenant="b")] == [b1]
        assert [s["id"] for s in store.list_sessions(tenant="a", source="api")] == [a1]
        assert store.list_sessions(tenant="nobody") == [] and store.list_sessions(tenant="") == []
        # None filters nothing: every session, the tenant-less one too.
        assert {s["id"] for s in store.list_sessions(tenant=None, limit=None)} == {a1, b1, a2, loose}
        assert all(s["tenant"] == "a" for s in store.list_sessions(tenant="a"))

    def test_offset_pages_newest_first_in_a_stable_order(self, store: SessionStore, make_store: Callable[[], SessionStore]) -> None:
        # Fixed start times with ties (only an import sets them): the order is started_at, then id, both descending.
        starts = [1000.0, 2000.0, 2000.0, 3000.0, 3000.0, 3000.0, 4000.0]
        rows = [_row(f"20990101_000000_0000{n:02d}", t, "t") for n, t in enumerate(starts)]
        rows.append(_row("20990101_000000_0000ff", 2500.0, "other"))
        assert len(store.import_sessions([(r, []) for r in rows]).imported) == len(rows)
        mine = sorted((r for r in rows if r.get("tenant") == "t"), key=lambda r: (r["started_at"], r["id"]), reverse=True)
        expected = [r["id"] for r in mine]
        assert [s["id"] for s in store.list_sessions(tenant="t", limit=None)] == expected
        with make_store() as other:
            for handle in (store, other):
                pages = [[s["id"] for s in handle.list_sessions(tenant="t", limit=3, offset=n)] for n in (0, 3, 6)]
                assert pages == [expected[:3], expected[3:6], expected[6:]]
                assert handle.list_sessions(tenant="t", limit=3, offset=7) == []
                assert [s["id"] for s in handle.list_sessions(tenant="t", limit=None, offset=5)] == expected[5:]
        everyone = [s["id"] for s in store.list_sessions(limit=None)]
        assert [s["id"] for s in store.list_sessions(limit=4, offset=2)] == everyone[2:6]
        with pytest.raises(ValueError):
            store.list_sessions(offset=-1)

    def test_search_finds_only_the_tenants_own_messages(self, store: SessionStore) -> None:
        a = store.create_session(source="api", tenant="a", title="A plans")
        b = store.create_session(source="api", tenant="b", title="B plans")
        store.append_messages(a, [{"role": "user", "content": "the vault code is marigold-7731"},
                                  {"role": "assistant", "content": "noted: 保险库密码 stored for auth"}])  # fmt: skip
        store.append_messages(b, [{"role": "user", "content": "our vault holds authentication notes"}])
        assert {h.session_id for h in store.search("vault")} == {a, b}
        assert [h.session_id for h in store.search("vault", tenant="b")] == [b]
        for query in ("marigold", "marigold-7731", "7731", "arigol", "保险库", "密码", "code OR marigold", "stored"):
            assert store.search(query, tenant="b") == [], query
            assert store.search(query, sort="time", context=False, tenant="b") == [], query
            assert {h.session_id for h in store.search(query, tenant="a")} == {a}, query
        assert store.search("vault", session_id=a, tenant="b") == []
        assert store.search("vault", tenant="nobody") == []
        # "auth" is a word only in a's text: b still gets its own substring hit, as if a did not exist.
        assert [h.session_id for h in store.search("auth", tenant="b")] == [b]
        [hit] = store.search("vault", tenant="b")
        assert hit.before is None and hit.after is None and (hit.title, hit.root_title) == ("B plans", "B plans")

    def test_lineage_roots_of_hits_never_leave_the_tenant(self, store: SessionStore) -> None:
        # A parent link across tenants (a caller passed one by hand): the walk stops at the tenant's edge.
        a = store.create_session(tenant="a", title="Secret A root")
        b = store.create_session(tenant="b", parent_session_id=a, title="B child")
        store.append_message(b, {"role": "user", "content": "periwinkle status"})
        [scoped] = store.search("periwinkle", tenant="b")
        assert (scoped.root_session_id, scoped.root_title) == (b, "B child")
        [unscoped] = store.search("periwinkle")
        assert (unscoped.root_session_id, unscoped.root_title) == (a, "Secret A root")

    def test_branches_and_compression_children_inherit_the_tenant(self, store: SessionStore) -> None:
        root = store.create_session(tenant="a", title="Lineage")
        store.append_message(root, {"role": "user", "content": "start"})
        branch = store.branch(root, source="cli")
        child = store.compression_child(branch, [{"role": "user", "content": "summary"}])
        again = store.branch(branch)  # from the compression tip
        assert [store.get_session(s)["tenant"] for s in (branch, child, again)] == ["a", "a", "a"]
        assert store.get_session(again)["parent_session_id"] == child
        assert {s["id"] for s in store.list_sessions(tenant="a", limit=None)} == {root, branch, child, again}
        loose = store.create_session()
        assert store.get_session(store.compression_child(loose))["tenant"] is None
        assert store.get_session(store.branch(loose))["tenant"] is None

    def test_import_keeps_the_tenant(self, store: SessionStore) -> None:
        owned, plain = _row("20990101_000000_0000a1", 1000.0, "a"), _row("20990101_000000_0000a2", 1001.0, None)
        said = [{"role": "user", "content": "imported amaranth words", "timestamp": 1000.0}]
        assert store.import_sessions([(owned, said), (plain, said)]).imported == [owned["id"], plain["id"]]
        assert (store.get_session(owned["id"])["tenant"], store.get_session(plain["id"])["tenant"]) == ("a", None)
        assert [s["id"] for s in store.list_sessions(tenant="a")] == [owned["id"]]
        assert [h.session_id for h in store.search("amaranth", tenant="a")] == [owned["id"]]
        # A copy of a copy (what `hermes sessions migrate` does) keeps it too.
        copy = {**store.get_session(owned["id"]), "id": "20990101_000000_0000a3"}
        store.import_sessions([(copy, store.get_messages(owned["id"]))])
        assert store.get_session(copy["id"])["tenant"] == "a"
        assert '"tenant": "a"' in store.export(owned["id"]).splitlines()[0]

    def test_a_taken_title_never_names_another_tenants_session(self, store: SessionStore) -> None:
        a = store.create_session(tenant="a", title="Shared name")
        b = store.create_session(tenant="b")
        for attempt in (lambda: store.create_session(tenant="b", title="Shared name"),
                        lambda: store.set_title(b, "Shared name")):  # fmt: skip
            with pytest.raises(TitleInUseError) as refused:
                attempt()
            assert a not in str(refused.value)
        with pytest.raises(TitleInUseError, match=a):  # its own tenant may be told which session
            store.create_session(tenant="a", title="Shared name")

    def test_rows_from_before_tenants_read_as_no_tenant(self, make_previous_schema_store: Callable[[], SessionStore]) -> None:
        with make_previous_schema_store() as store:
            assert store.get_session(LEGACY_SESSION_ID)["tenant"] is None
            assert [(s["id"], s["tenant"]) for s in store.list_sessions()] == [(LEGACY_SESSION_ID, None)]
            assert store.list_sessions(tenant="a") == [] and store.search("heliotrope", tenant="a") == []
            assert [h.session_id for h in store.search("heliotrope")] == [LEGACY_SESSION_ID]
            assert store.get_session(store.branch(LEGACY_SESSION_ID))["tenant"] is None
            fresh = store.create_session(tenant="a")
            assert [s["id"] for s in store.list_sessions(tenant="a")] == [fresh]
