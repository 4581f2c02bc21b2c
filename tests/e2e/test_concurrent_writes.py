"""Two writers at once both land (issue 27): ``config.yaml``, ``.env`` and ``auth.json`` are read,
changed and replaced under one lock per file, by real ``hermes`` processes started together.
(Memory files: tests/memory_providers/test_builtin.py, two writer processes.) Before, 3 of 8
rounds of two ``hermes config set`` lost one change and ``.env`` kept 11 of 12 keys."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from hermes.kernel import file_lock, lock_file_for

ROUNDS = 8


def _start(*args: str, input: str | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hermes.kernel", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))  # fmt: skip


def _together(*commands: tuple[str, ...]) -> None:
    """Run the commands at the same moment and wait for all; each must succeed."""
    procs = [_start(*c) for c in commands]
    for proc, command in zip(procs, commands):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (command, err)


def test_two_config_sets_at_once_both_land_every_round(hermes_home: Path) -> None:
    for n in range(ROUNDS):
        _together(("config", "set", "agent.max_iterations", str(100 + n)), ("config", "set", "model.max_tokens", str(2000 + n)))
        data = yaml.safe_load((hermes_home / "config.yaml").read_text())
        assert (data["agent"]["max_iterations"], data["model"]["max_tokens"]) == (100 + n, 2000 + n), f"round {n}"


def test_two_env_sets_at_once_both_land_every_round(hermes_home: Path) -> None:
    for n in range(ROUNDS):
        _together(("config", "set", f"ROUND{n}_A_TOKEN", f"a{n}"), ("config", "set", f"ROUND{n}_B_TOKEN", f"b{n}"))
    lines = (hermes_home / ".env").read_text().splitlines()
    assert sorted(lines) == sorted([f"ROUND{n}_A_TOKEN=a{n}" for n in range(ROUNDS)] + [f"ROUND{n}_B_TOKEN=b{n}" for n in range(ROUNDS)])
    assert oct((hermes_home / ".env").stat().st_mode & 0o777) == "0o600"


def test_two_auth_adds_at_once_both_land_every_round(hermes_home: Path) -> None:
    # No --label: each is named after the keys already stored, counted under the same lock.
    for n in range(ROUNDS):
        _together(*(("auth", "add", "openai", "--key", f"sk-round{n}-{side}-0123456789abcdef") for side in "ab"))
    stored = json.loads((hermes_home / "auth.json").read_text())["credentials"]["openai"]
    assert sorted(c["key"] for c in stored) == sorted(f"sk-round{n}-{side}-0123456789abcdef" for n in range(ROUNDS) for side in "ab")
    assert sorted(c["label"] for c in stored) == sorted(f"key-{i}" for i in range(1, 2 * ROUNDS + 1))


def test_config_set_reads_the_file_under_the_lock(hermes_home: Path) -> None:
    # Held here, the lock makes `config set` wait; a change made meanwhile is in what it writes.
    path = hermes_home / "config.yaml"
    hermes_home.mkdir(parents=True)
    path.write_text("config_version: 1\nagent:\n  max_iterations: 7\n")
    with file_lock(lock_file_for(path)):
        proc = _start("config", "set", "model.max_tokens", "1234")
        time.sleep(3)  # time enough to start and reach the lock
        assert proc.poll() is None, proc.communicate()
        path.write_text("config_version: 1\nagent:\n  max_iterations: 9\n")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    data = yaml.safe_load(path.read_text())
    assert (data["agent"]["max_iterations"], data["model"]["max_tokens"]) == (9, 1234)
    assert lock_file_for(path) == hermes_home / ".config.yaml.lock"
