"""Choosing and opening the SQLite store from config: the scheme, synchronous mode and errors, exactly."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes.kernel.errors import HermesError
from hermes.kernel.store import SessionStore, SQLiteSessionStore
from hermes.kernel.store.opening import store_settings


@pytest.mark.parametrize(
    ("url", "backend"),
    [("postgresql://h/db?next=sqlite://x", "postgresql"),  # only the first "://" ends the scheme
     ("postgres+psycopg+extra://h/db", "postgresql")],  # only the first "+" ends the dialect
)  # fmt: skip
def test_the_backend_comes_from_the_leading_scheme(url: str, backend: str) -> None:
    assert store_settings({"store": {"url": url}}, {}).backend == backend


@pytest.mark.parametrize(("options", "pragma"), [({}, 1), ({"synchronous": None}, 1), ({"synchronous": "full"}, 2)])
def test_from_config_applies_the_synchronous_mode(tmp_path: Path, options: dict[str, object], pragma: int) -> None:
    home = SimpleNamespace(state_db=tmp_path / "state.db")
    with SQLiteSessionStore.from_config(url=None, home=home, options=options) as store:
        assert store.path == tmp_path / "state.db"
        assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == pragma


def test_from_config_errors_are_one_exact_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a wrongly accepted relative URL would make a file here
    home = SimpleNamespace(state_db=tmp_path / "state.db")
    with pytest.raises(HermesError) as info:
        SQLiteSessionStore.from_config(url=None, home=home, options={"synchronous": "fast"})
    assert str(info.value) == (
        "store.synchronous must be one of OFF, NORMAL, FULL, EXTRA, not 'FAST'; "
        "fix it with `hermes config set store.synchronous NORMAL`"
    )
    with pytest.raises(HermesError) as info:
        SQLiteSessionStore.from_config(url="sqlite:state.db", home=home, options={})
    assert str(info.value) == (
        "store.url 'sqlite:state.db' is not a SQLite URL; write sqlite:///relative/path or sqlite:////abs/path"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_export_format_names_the_known_ones(store: SessionStore) -> None:
    sid = store.create_session()
    with pytest.raises(HermesError) as info:
        store.export(sid, "pdf")
    assert str(info.value) == "unknown export format 'pdf'; use one of: jsonl, markdown"
