"""``hermes sessions ...`` and ``hermes usage`` as a user runs them: a real subprocess, on state.db and on PostgreSQL."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hermes.kernel import CanonicalUsage, CostResult

LIST_FIELDS = ["id", "title", "source", "model", "parent_session_id", "started_at", "ended_at", "end_reason", "message_count"]
SEARCH_FIELDS = ["session_id", "root_session_id", "message_id", "role", "snippet"]


@pytest.fixture
def ids(store_backend) -> dict[str, str]:
    with store_backend.open() as store:
        root = store.create_session(source="cli", model="gpt-test", title="Refactor auth")
        store.append_messages(root, [{"role": "user", "content": "refactor the auth module"},
                                     {"role": "assistant", "content": "Done; tokens now rotate."}])  # fmt: skip
        store.record_usage(root, CanonicalUsage(1000, 200, 300, 40, 50, 1), CostResult(0.25, "actual"))
        child = store.compression_child(root, [{"role": "user", "content": "summary of auth refactor"}])
        store.record_usage(child, CanonicalUsage(10, 2, request_count=1), CostResult(None, "unknown"))
        api = store.create_session(source="api", model="claude-test")
        store.append_message(api, {"role": "user", "content": "unrelated gateway chat"})
    store_backend.rows("UPDATE sessions SET started_at = started_at - 10 WHERE id = ?", (root,))
    return {"root": root, "child": child, "api": api}


def test_list_json_fields_filters_and_limit(hermes, ids) -> None:
    result = hermes("sessions", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [list(r) for r in rows] == [LIST_FIELDS] * 3
    by_id = {r["id"]: r for r in rows}
    assert by_id[ids["child"]]["parent_session_id"] == ids["root"]
    assert by_id[ids["child"]]["title"] == "Refactor auth #2"
    assert by_id[ids["root"]]["end_reason"] == "compression" and by_id[ids["root"]]["message_count"] == 2
    assert by_id[ids["root"]]["started_at"].endswith("+00:00")
    only_api = json.loads(hermes("sessions", "list", "--json", "--source", "api").stdout)
    assert [r["id"] for r in only_api] == [ids["api"]]
    assert len(json.loads(hermes("sessions", "list", "--json", "--limit", "1").stdout)) == 1
    table = hermes("sessions", "list")
    assert ids["root"] in table.stdout and "Refactor auth #2" in table.stdout


def test_search_json_resolves_lineage_roots(hermes, ids) -> None:
    result = hermes("sessions", "search", "auth refactor", "--json")
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert [list(h) for h in hits] == [SEARCH_FIELDS] * len(hits) and len(hits) == 2
    assert {h["root_session_id"] for h in hits} == {ids["root"]}
    assert {h["session_id"] for h in hits} == {ids["root"], ids["child"]}
    assert all("**" in h["snippet"] for h in hits)
    for nasty in ['"unbalanced', "AND OR (", "-", "a.b*"]:
        r = hermes("sessions", "search", nasty, "--json")
        assert r.returncode == 0 and isinstance(json.loads(r.stdout), list), (nasty, r.stderr)
    people = hermes("sessions", "search", "tokens")
    assert "Done; **tokens** now rotate." in people.stdout


def test_show_branch_export_delete(hermes, ids, tmp_path: Path) -> None:
    shown = hermes("sessions", "show", ids["child"])
    assert shown.returncode == 0, shown.stderr
    assert f"lineage: {ids['child']} <- {ids['root']} (compression)" in shown.stdout
    assert "summary of auth refactor" in shown.stdout
    shown_json = json.loads(hermes("sessions", "show", ids["root"], "--json").stdout)
    assert [m["content"] for m in shown_json["messages"]] == ["refactor the auth module", "Done; tokens now rotate."]
    assert shown_json["lineage"]["children"][0]["id"] == ids["child"]

    branched = hermes("sessions", "branch", ids["child"], "--title", "Auth, second try")
    assert branched.returncode == 0, branched.stderr
    new_id = branched.stdout.split()[1]
    rows = {r["id"]: r for r in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert rows[new_id]["title"] == "Auth, second try" and rows[new_id]["parent_session_id"] == ids["child"]
    assert rows[ids["child"]]["end_reason"] == "branched"

    exported = hermes("sessions", "export", ids["root"])
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert lines[0]["type"] == "session" and [l["role"] for l in lines[1:]] == ["user", "assistant"]
    markdown = hermes("sessions", "export", ids["root"], "--format", "markdown")
    assert markdown.stdout.startswith("# Refactor auth\n")
    out = tmp_path / "x.md"
    assert hermes("sessions", "export", ids["root"], "-f", "markdown", "-o", str(out)).returncode == 0
    assert out.read_text(encoding="utf-8") == markdown.stdout

    deleted = hermes("sessions", "delete", ids["api"], "--yes")
    assert deleted.returncode == 0 and f"deleted {ids['api']}" in deleted.stdout
    assert ids["api"] not in hermes("sessions", "list").stdout
    refused = hermes("sessions", "delete", ids["root"], input="n\n")
    assert refused.returncode != 0
    assert ids["root"] in hermes("sessions", "list").stdout


def test_prune(hermes, ids, store_backend) -> None:
    with store_backend.open() as store:
        store.end_session(ids["api"], "user_exit")  # prune never deletes an open session
    store_backend.rows("UPDATE sessions SET updated_at = 0 WHERE id = ?", (ids["api"],))
    result = hermes("sessions", "prune", "--older-than", "30", "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pruned 1 session"
    remaining = {r["id"] for r in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert remaining == {ids["root"], ids["child"]}


def test_usage_one_session_and_all(hermes, ids) -> None:
    one = json.loads(hermes("usage", ids["root"], "--json").stdout)
    assert one["tokens"]["input_tokens"] == 1000 and one["tokens"]["cache_read_tokens"] == 300
    assert one["tokens"]["cache_write_tokens"] == 40 and one["tokens"]["reasoning_tokens"] == 50
    assert one["api_calls"] == 1 and one["compressions"] == 1
    assert one["cost_usd"] == 0.25 and one["cost_status"] == "actual"
    total = json.loads(hermes("usage", "--json").stdout)
    assert total["api_calls"] == 2 and total["cost_status"] == "unknown" and total["cost_usd"] is None
    assert total["known_cost_usd"] == 0.25
    people = hermes("usage")
    assert "unknown (at least $0.2500" in people.stdout and "API calls: 2  compressions: 1" in people.stdout
    assert "$0.2500 (actual)" in hermes("usage", ids["root"]).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sessions", "show", "nope"], "error: no session 'nope'; see `hermes sessions list`"),
        (["sessions", "branch", "nope"], "error: no session 'nope'"),
        (["sessions", "delete", "nope", "--yes"], "error: no session 'nope'"),
        (["sessions", "export", "nope"], "error: no session 'nope'"),
        (["usage", "nope"], "error: no session 'nope'"),
        (["sessions", "export", "ROOT", "--format", "xml"], "error: unknown --format 'xml'; use one of: jsonl, markdown"),
        (["sessions", "search", "x", "--sort", "best"], "error: unknown --sort 'best'"),
        (["sessions", "prune", "--older-than", "-1", "--yes"], "error: --older-than must be zero or more days"),
    ],
)
def test_bad_input_gets_one_line_and_a_non_zero_exit(hermes, ids, args: list[str], message: str) -> None:
    result = hermes(*[ids["root"] if a == "ROOT" else a for a in args])
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert result.stderr.strip().startswith(message)
    assert "Traceback" not in result.stderr


def test_empty_home_lists_nothing_and_creates_no_database(hermes, hermes_home: Path) -> None:
    assert hermes("sessions", "list").stdout.strip() == "no sessions yet"
    assert json.loads(hermes("sessions", "list", "--json").stdout) == []
    assert json.loads(hermes("sessions", "search", "x", "--json").stdout) == []
    assert json.loads(hermes("usage", "--json").stdout)["api_calls"] == 0
    assert not (hermes_home / "state.db").exists()


def test_help_path_does_not_import_sqlite_utils(hermes) -> None:
    code = "import sys, runpy; sys.argv=['hermes','--help']\ntry:\n runpy.run_module('hermes.kernel', run_name='__main__')\nexcept SystemExit: pass\nprint('SQLU', 'sqlite_utils' in sys.modules, 'sqlite3' in sys.modules)"
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert "sessions" in result.stdout and "usage" in result.stdout
    assert "SQLU False False" in result.stdout
