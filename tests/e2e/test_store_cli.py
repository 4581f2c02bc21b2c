"""The store slot where a user meets it: ``hermes sessions migrate``, store config mistakes, ``hermes doctor``.

Each row of the fault table runs the real CLI in a subprocess and checks the exit
code, the one line on screen, what is stored and that the next command still works.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.plugins.session_stores.postgresql import PostgresSessionStore


def _one_line_error(result, needle: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode != 0
    # The progress bar (migrate) may stand above the error; the error itself is one line.
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("copying sessions")]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.stderr, result.stderr


@pytest.fixture
def local(hermes_home: Path) -> dict[str, list[str]]:
    """A state.db with 12 sessions: a compression chain, a branch, titles and usage."""
    from hermes.kernel import CanonicalUsage, CostResult

    ids: dict[str, list[str]] = {"all": []}
    with SQLiteSessionStore(hermes_home / "state.db") as store:
        for n in range(10):
            sid = store.create_session(title=f"topic {n}")
            store.append_messages(sid, [{"role": "user", "content": f"question {n} about kumquats"},
                                        {"role": "assistant", "content": f"answer {n}"}])  # fmt: skip
            store.record_usage(sid, CanonicalUsage(10, 5, request_count=1), CostResult(0.01, "actual"))
            ids["all"].append(sid)
        child = store.compression_child(ids["all"][0], [{"role": "user", "content": "summary of kumquats", "marker": "handoff"}])
        store.record_compaction(child, parent_session_id=ids["all"][0], engine="compressor", fidelity=0.75,
                                missing=["kumquat count"], handoff="summary of kumquats", details={"score": 0.75})  # fmt: skip
        branch = store.branch(child)
        ids["all"] += [child, branch]
    return ids


def test_migrate_copies_everything_and_a_second_run_changes_nothing(hermes, local, postgres_url: str, hermes_home: Path) -> None:
    first = hermes("sessions", "migrate", "--to", postgres_url, "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert (report["sessions"], report["messages"], report["imported"], report["ok"]) == (12, 22, 12, True)
    again = json.loads(hermes("sessions", "migrate", "--to", postgres_url, "--json").stdout)
    assert (again["imported"], again["skipped"]) == (0, 12)
    with SQLiteSessionStore(hermes_home / "state.db") as src, PostgresSessionStore(postgres_url, pool_size=1) as dst:
        for sid in local["all"]:
            assert dst.get_session(sid) == src.get_session(sid)
            assert [m["content"] for m in dst.get_messages(sid)] == [m["content"] for m in src.get_messages(sid)]
        assert dst.usage().as_dict() == src.usage().as_dict()
        assert dst.resume(local["all"][0]).session["id"] == src.resume(local["all"][0]).session["id"]
        child = local["all"][10]  # its compaction record and its handoff's marker came along
        assert dst.compaction(child) == src.compaction(child) and dst.compaction(child)["fidelity"] == 0.75
        assert dst.resume(child).messages == src.resume(child).messages and dst.resume(child).messages[0]["marker"] == "handoff"
    # The configured store is now the server: the next commands read it.
    listed = hermes("sessions", "list", "--json", "--limit", "100", env={"HERMES_STORE_URL": postgres_url})
    assert {r["id"] for r in json.loads(listed.stdout)} == set(local["all"])
    hits = hermes("sessions", "search", "kumquats OR summary", "--json", env={"HERMES_STORE_URL": postgres_url})
    local_hits = hermes("sessions", "search", "kumquats OR summary", "--json")  # the same sessions in state.db
    # A message a compression child repeats shows once per lineage, on either backend.
    assert len(json.loads(hits.stdout)) == len(json.loads(local_hits.stdout)) == 11


def test_an_interrupted_migration_goes_on_where_it_stopped(hermes, local, postgres_url: str, hermes_home: Path) -> None:
    with SQLiteSessionStore(hermes_home / "state.db") as src, PostgresSessionStore(postgres_url, pool_size=1) as dst:
        # What a first, interrupted run had committed: five sessions, and one whose
        # compaction record it did not get to write.
        done = [*local["all"][:5], local["all"][10]]
        dst.import_sessions([(src.get_session(s), src.get_messages(s)) for s in done])
    result = hermes("sessions", "migrate", "--to", postgres_url, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["imported"], report["skipped"], report["ok"]) == (6, 6, True)
    with PostgresSessionStore(postgres_url, pool_size=1) as dst:
        assert dst.compaction(local["all"][10])["missing"] == ["kumquat count"]
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT (session_id, seq)) FROM messages").fetchone() == (22, 22)


def test_a_diverged_session_is_reported_and_left_alone(hermes, local, postgres_url: str) -> None:
    with PostgresSessionStore(postgres_url, pool_size=1) as dst:
        dst.create_session(session_id=local["all"][3])
        dst.append_message(local["all"][3], {"role": "user", "content": "written on the server"})
    result = hermes("sessions", "migrate", "--to", postgres_url)
    _one_line_error(
        result,
        f"1 session(s) already in the target hold a different number of messages ({local['all'][3]}: "
        "2 in the source, 1 in the target); delete them there",
    )
    assert "12 sessions read, copied 11 sessions, 0 already there, 0 titles renumbered" in result.stdout
    with PostgresSessionStore(postgres_url, pool_size=1) as dst:
        assert [m["content"] for m in dst.get_messages(local["all"][3])] == ["written on the server"]
        assert dst.counts()["sessions"] == 12  # the others were copied


def test_migrate_back_to_a_file(hermes, local, postgres_url: str, tmp_path: Path) -> None:
    assert hermes("sessions", "migrate", "--to", postgres_url).returncode == 0
    copy = tmp_path / "copy.db"
    result = hermes("sessions", "migrate", "--from", postgres_url, "--to", f"sqlite:///{copy}")
    assert result.returncode == 0, result.stderr and "22 messages verified" in result.stdout
    with SQLiteSessionStore(copy) as store:
        assert store.counts() == {"sessions": 12, "messages": 22}
        assert store.get_session(local["all"][11])["title"] == "topic 0 #3"


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["sessions", "migrate", "--to", "postgresql://hermes:sekret@/nodb?host=/nonexistent"], {},
         "cannot use the session store at postgresql://hermes:***@/nodb"),
        (["sessions", "migrate", "--to", "STATE_DB"], {}, "the source and the target are the same store"),
        (["sessions", "list"], {"HERMES_STORE__BACKEND": "mongo"}, "'mongo'"),
        (["sessions", "list"], {"HERMES_STORE__BACKEND": "postgresql"}, "set HERMES_STORE_URL=postgresql://"),
        (["sessions", "list"], {"HERMES_STORE__BACKEND": "postgresql", "HERMES_STORE_URL": "sqlite:///x.db"},
         "store.backend is 'postgresql' but store.url is a sqlite:// URL"),
        (["sessions", "list"], {"HERMES_STORE__SYNCHRONOUS": "FAST"}, "store.synchronous: 'FAST' is not allowed; use one of OFF, NORMAL, FULL, EXTRA"),
        (["sessions", "list"], {"HERMES_STORE_URL": "postgresql://hermes:sekret@/nodb?host=/nonexistent"},
         "postgresql://hermes:***@/nodb"),
    ],
)  # fmt: skip
def test_store_mistakes_get_one_line_and_lose_nothing(hermes, local, hermes_home: Path, args, env, needle) -> None:  # type: ignore[no-untyped-def]
    before = (hermes_home / "state.db").read_bytes()
    result = hermes(*[str(hermes_home / "state.db") if a == "STATE_DB" else a for a in args], env=env)
    _one_line_error(result, needle)
    assert "sekret" not in result.stdout + result.stderr
    assert (hermes_home / "state.db").read_bytes() == before
    assert len(json.loads(hermes("sessions", "list", "--json").stdout)) == 12  # the next command works


def test_doctor_reports_the_store(hermes, local, postgres_url: str) -> None:
    ok = hermes("doctor", "--json", env={"HERMES_STORE_URL": postgres_url, "OPENAI_API_KEY": "sk-doctor-test"})
    assert ok.returncode == 0, ok.stdout
    checks = {c["name"]: c for c in json.loads(ok.stdout)["store"]}
    assert checks["connectivity"]["ok"] and checks["migrations"]["detail"] == "up to date"
    assert checks["pg_trgm"]["ok"]
    bad = hermes("doctor", env={"HERMES_STORE_URL": "postgresql://hermes:sekret@/nodb?host=/nonexistent"})
    assert bad.returncode == 1 and "problem: store store: cannot use the session store" in bad.stdout
    assert "sekret" not in bad.stdout + bad.stderr
