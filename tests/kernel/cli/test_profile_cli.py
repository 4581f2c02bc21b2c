"""``hermes profile`` and ``-p``: separate homes with their own config."""

from __future__ import annotations

import json
from pathlib import Path


def test_profile_lifecycle(hermes, hermes_home: Path) -> None:
    assert hermes("profile", "create", "work").returncode == 0
    assert (hermes_home / "profiles" / "work").is_dir()
    hermes("-p", "work", "config", "set", "model.name", "work-model")
    assert hermes("config", "get", "model.name").stdout == "\n"
    assert hermes("-p", "work", "config", "get", "model.name").stdout == "work-model\n"
    assert hermes("--profile=work", "config", "path").stdout.strip() == str(hermes_home / "profiles/work/config.yaml")

    rows = json.loads(hermes("profile", "list", "--json").stdout)
    assert [(r["name"], r["active"]) for r in rows] == [("default", True), ("work", False)]

    assert hermes("profile", "use", "work").returncode == 0
    assert hermes("config", "get", "model.name").stdout == "work-model\n"
    rows = json.loads(hermes("profile", "list", "--json").stdout)
    assert [r["name"] for r in rows if r["active"]] == ["work"]

    assert hermes("profile", "delete", "work", "--yes").returncode == 0
    assert not (hermes_home / "profiles" / "work").exists()
    assert hermes("config", "get", "model.name").stdout == "\n"  # back on default


def test_clone_copies_config(hermes) -> None:
    hermes("config", "set", "agent.max_iterations", "7")
    assert hermes("profile", "create", "copy", "--clone").returncode == 0
    assert hermes("-p", "copy", "config", "get", "agent.max_iterations").stdout == "7\n"


def test_profile_errors_are_one_line(hermes) -> None:
    for args, needle in [
        (("-p", "ghost", "config", "show"), "hermes profile create ghost"),
        (("profile", "use", "ghost"), "does not exist"),
        (("profile", "create", "Bad Name"), "invalid profile name"),
        (("profile", "delete", "default", "--yes"), "cannot be deleted"),
    ]:
        result = hermes(*args)
        assert result.returncode != 0, args
        assert needle in result.stderr and "Traceback" not in result.stderr, result.stderr
    hermes("profile", "create", "dup")
    assert "already exists" in hermes("profile", "create", "dup").stderr


def test_delete_without_yes_and_no_input_keeps_the_profile(hermes, hermes_home: Path) -> None:
    hermes("profile", "create", "keep")
    result = hermes("profile", "delete", "keep", input="n\n")
    assert result.returncode != 0
    assert (hermes_home / "profiles" / "keep").is_dir()
