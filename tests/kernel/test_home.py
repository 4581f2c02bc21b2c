"""HERMES_HOME, profile resolution and atomic writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hermes.kernel import HermesError, HermesHome, atomic_write, resolve_home
from hermes.kernel.home import hermes_root, validate_profile_name, write_active_profile


def test_default_root_is_dot_hermes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HERMES_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hermes_root() == tmp_path / ".hermes"


def test_profile_precedence(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("work", "play", "flag"):
        (hermes_home / "profiles" / name).mkdir(parents=True)
    assert resolve_home().profile == "default" and resolve_home().path == hermes_home
    write_active_profile(hermes_home, "work")
    assert resolve_home().path == hermes_home / "profiles" / "work"
    monkeypatch.setenv("HERMES_PROFILE", "play")
    assert resolve_home().profile == "play"
    assert resolve_home("flag").profile == "flag"
    assert resolve_home("flag").config_path == hermes_home / "profiles" / "flag" / "config.yaml"


def test_missing_profile_says_how_to_create_it() -> None:
    with pytest.raises(HermesError, match="hermes profile create ghost"):
        resolve_home("ghost")


@pytest.mark.parametrize("name", ["", "Upper", "../x", "a/b", "-lead", "x" * 65, "sp ace"])
def test_invalid_profile_names(name: str) -> None:
    with pytest.raises(HermesError, match="invalid profile name"):
        validate_profile_name(name)


def test_atomic_write_sets_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "dir" / "auth.json"
    atomic_write(target, '{"k": 1}')
    atomic_write(target, '{"k": 2}')
    assert target.read_text() == '{"k": 2}'
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert os.listdir(target.parent) == ["auth.json"]


def test_atomic_write_keeps_old_content_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "config.yaml"
    atomic_write(target, "old: 1\n")

    with pytest.raises(TypeError):
        atomic_write(target, None)  # type: ignore[arg-type]
    assert target.read_text() == "old: 1\n"
    assert os.listdir(tmp_path) == ["config.yaml"]


def test_hermes_home_is_path_like(tmp_path: Path) -> None:
    """Providers written as ``os.path.join(str(home), ...)`` or ``Path(home)`` both reach the profile folder."""
    default = HermesHome(root=tmp_path, profile="default")
    work = HermesHome(root=tmp_path, profile="work")
    assert os.fspath(default) == str(default) == str(tmp_path)
    assert os.fspath(work) == str(work) == str(tmp_path / "profiles" / "work")
    assert os.path.join(work, "memory_store.db") == str(tmp_path / "profiles" / "work" / "memory_store.db")
    assert Path(work) / "x" == work.path / "x" and work.plugins_dir == work.path / "plugins"


def test_file_lock_excludes_threads_and_is_reentrant_in_one(tmp_path: Path) -> None:
    import threading

    from hermes.kernel import file_lock, lock_file_for

    data = tmp_path / "counter"
    data.write_text("0")
    lock = lock_file_for(data)
    assert lock == tmp_path / ".counter.lock" and lock_file_for(tmp_path / ".env") == tmp_path / ".env.lock"

    def bump() -> None:
        for _ in range(200):
            with file_lock(lock):
                with file_lock(lock):  # an update calling another: no deadlock
                    value = int(data.read_text())
                    atomic_write(data, str(value + 1))

    threads = [threading.Thread(target=bump) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert data.read_text() == "600"
    assert oct(lock.stat().st_mode & 0o777) == "0o600"
