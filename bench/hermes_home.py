"""Importing a large Hermes Agent history, and ``sessions list`` on it against a native store.

A ``state.db`` with Hermes Agent 0.19.0's schema (created by Hermes Agent's own
``hermes_state``, from PyPI) is filled with 10,000 sessions and 200,000
messages: every tenth session continues the one before through compression,
one assistant message in four calls a tool. ``hermes import hermes`` runs as a
user would (a subprocess), then again (nothing new: the idempotent path).
``hermes sessions list`` then runs on the imported home and on a home whose
store the kernel itself wrote with the same sessions and messages. Target:
the imported home's list within 1.2 x the native one's.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 1.2


def _fill(path: Path, sessions: int, per_session: int) -> None:
    call = json.dumps([{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}])
    with sqlite3.connect(path) as conn:
        rows = []
        for i in range(sessions):
            parent = f"s{i - 1:06d}" if i % 10 == 9 else None
            rows.append((f"s{i:06d}", "cli" if i % 3 else "telegram", 1_700_000_000 + i * 60, f"session {i}", parent,
                         "compression" if i % 10 == 8 else None, 1000 + i, 100 + i, 0.001))  # fmt: skip
        conn.executemany(
            "INSERT INTO sessions (id, source, started_at, title, parent_session_id, end_reason, input_tokens, "
            "output_tokens, estimated_cost_usd, model) VALUES (?,?,?,?,?,?,?,?,?,'gpt-4.1')",
            rows,
        )
        messages = []
        for i in range(sessions):
            for j in range(per_session):
                role = "user" if j % 2 == 0 else "assistant"
                calls = call if role == "assistant" and j % 4 == 1 else None
                text = f"message {j} of session {i}: " + "the parser handles nested brackets and quoted strings " * 3
                messages.append((f"s{i:06d}", role, text, calls, 1_700_000_000 + i * 60 + j))
        conn.executemany("INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?,?,?,?,?)", messages)


def _hermes(home: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HERMES_HOME=str(home), HERMES_LOAD_PLUGINS="")
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hermes.kernel", *args], capture_output=True, text=True, env=env, timeout=1800)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"hermes {' '.join(args)} failed: {proc.stderr[-2000:]}")
    return elapsed, proc


def _native_copy(imported: Path, native_home: Path) -> None:
    """The same sessions and messages written by the kernel itself, into a fresh store."""
    from hermes.kernel.store import SQLiteSessionStore
    from hermes.kernel.store.migrate import copy_sessions

    source, target = SQLiteSessionStore(imported), SQLiteSessionStore(native_home / "state.db")
    try:
        report = copy_sessions(source, target)
        assert report.ok, report.as_dict()
    finally:
        source.close()
        target.close()


def run(runs: int | None = None, sessions: int = 10_000, per_session: int = 20) -> dict[str, Any]:
    from tests.hermes_agent import LATEST, run_release

    runs = max(3, runs or 7)
    with tempfile.TemporaryDirectory() as tmp:
        home, native = Path(tmp) / "hermes-home", Path(tmp) / "native-home"
        home.mkdir()
        native.mkdir()
        run_release(LATEST, "import hermes_state; hermes_state.SessionDB().close()", home)
        _fill(home / "state.db", sessions, per_session)
        import_s, first = _hermes(home, "import", "hermes", "--json")
        report = json.loads(first.stdout)
        again_s, _ = _hermes(home, "import", "hermes", "--json")
        _native_copy(home / "hermes-kernel" / "state.db", native)
        imported_list, native_list = [], []
        for _ in range(runs):  # interleaved, so drift hits both alike
            imported_list.append(_hermes(home, "sessions", "list")[0])
            native_list.append(_hermes(native, "sessions", "list")[0])
        imported_ms = statistics.median(imported_list) * 1000
        native_ms = statistics.median(native_list) * 1000
        result = {
            "benchmark": "hermes_home",
            "runs": runs,
            "sessions": report["sessions"],
            "messages": report["messages"],
            "import_s": round(import_s, 2),
            "import_messages_per_s": round(report["messages"] / import_s),
            "reimport_s": round(again_s, 2),
            "list_imported_ms": round(imported_ms, 1),
            "list_native_ms": round(native_ms, 1),
            "list_ratio": round(imported_ms / native_ms, 3),
            "target_ratio": TARGET_RATIO,
        }
    print(
        f"hermes_home: imported {result['sessions']} sessions / {result['messages']} messages in {result['import_s']} s "
        f"({result['import_messages_per_s']} messages/s); again (nothing new) {result['reimport_s']} s; "
        f"sessions list {result['list_imported_ms']} ms imported vs {result['list_native_ms']} ms native "
        f"= {result['list_ratio']} x (target <= {TARGET_RATIO} x)"
    )
    return result
