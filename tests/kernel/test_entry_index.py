"""The entry-point index: current after installs, removals and edits; used when it is; harmless when broken."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.kernel import entry_index
from hermes.kernel.entry_index import EntryRecord, installed_entry_points
from tests.helpers import FakeDistributions


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("HERMES_ENTRY_POINT_CACHE", str(folder))
    return folder


def _acme(index: list[EntryRecord]) -> list[tuple[str, str, str]]:
    return sorted((r.group, r.name, r.value) for r in index if r.distribution == "acme-tools")


def _bump(path: Path) -> None:
    """A later modification time, as a real edit a moment later would give."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))


def test_installs_removals_and_edits_are_seen_and_an_unchanged_install_is_not_rescanned(
    cache: Path, fake_dists: FakeDistributions, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _acme(installed_entry_points()) == []
    fake_dists.add("acme-tools", {"hermes.tools": {"acme": "acme_tools:TOOLS"}})
    _bump(fake_dists.root)
    first = installed_entry_points()
    assert _acme(first) == [("hermes.tools", "acme", "acme_tools:TOOLS")]
    assert next(r for r in first if r.name == "acme").version == "1.0.0"
    assert len(list(cache.glob("*.txt"))) == 1

    def no_scan() -> None:
        raise AssertionError("the index was current; nothing should be scanned")

    with monkeypatch.context() as patch:
        patch.setattr(entry_index, "scan_distributions", no_scan)
        assert installed_entry_points() == first

    # An edited entry_points.txt (an editable install re-registered) is noticed.
    text = fake_dists.root / "acme_tools-1.0.0.dist-info" / "entry_points.txt"
    text.write_text("[hermes.tools]\nacme = acme_tools:MORE_TOOLS\n", encoding="utf-8")
    _bump(text)
    assert _acme(installed_entry_points()) == [("hermes.tools", "acme", "acme_tools:MORE_TOOLS")]

    # Removed: its folder is gone, so the sys.path folder changed.
    shutil.rmtree(fake_dists.root / "acme_tools-1.0.0.dist-info")
    _bump(fake_dists.root)
    assert _acme(installed_entry_points()) == []
    assert len(list(cache.glob("*.txt"))) == 1  # one file per interpreter, rewritten, never piling up


@pytest.mark.parametrize("damage", [b"{not an index", b"hermes-entry-points 1\nX\tgarbage\n",
                                    b"hermes-entry-points 1\nE\ttoo\tfew\n", b"", b"\xff\xfe\x00",
                                    b"hermes-entry-points 1\n"])  # fmt: skip
def test_a_damaged_index_is_rescanned_and_rewritten(cache: Path, damage: bytes) -> None:
    good = installed_entry_points()
    (index,) = cache.glob("*.txt")
    index.write_bytes(damage)
    assert installed_entry_points() == good
    text = index.read_text(encoding="utf-8")
    assert text.startswith("hermes-entry-points 1\n") and "\topenai\thermes.plugins.openai_provider:OpenAIProvider\t" in text


def test_an_unwritable_or_disabled_cache_still_gives_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("HERMES_ENTRY_POINT_CACHE", str(blocker / "below"))
    found = installed_entry_points()
    assert any(r.group == "hermes.model_providers" and r.name == "openai" for r in found)
    monkeypatch.setenv("HERMES_ENTRY_POINT_CACHE", "off")
    assert entry_index.cache_dir() is None and installed_entry_points() == found


def test_records_load_what_their_value_names() -> None:
    assert EntryRecord("g", "n", "os.path:join", "d", "1").load() is os.path.join
    assert EntryRecord("g", "n", "os : path.join [extra]", "d", "1").load() is os.path.join
    assert EntryRecord("g", "n", "json", "d", "1").load() is json
    with pytest.raises(ValueError, match="malformed value 'not a value!'"):
        EntryRecord("g", "n", "not a value!", "d", "1").load()


def test_help_from_a_current_index_never_imports_importlib_metadata(cache: Path) -> None:
    code = "import sys; from hermes.kernel.cli import main; sys.argv = ['hermes', '--help']\n" \
           "try:\n    main()\nexcept SystemExit:\n    pass\nprint('importlib.metadata' in sys.modules, file=sys.stderr)"  # fmt: skip
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cache.parent)
            for _ in range(2)]  # fmt: skip
    assert all("serve" in r.stdout for r in runs)
    assert runs[1].stderr.strip().splitlines()[-1] == "False", runs[1].stderr
