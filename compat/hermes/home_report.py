"""What ``hermes doctor`` says of a home that Hermes Agent also uses: shared, imported, not used.

Only read here: Hermes Agent's files are opened read-only and never
repaired. The one repair offered, importing sessions not imported yet, writes
the kernel's own store only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .state_db import HermesStateDB

__all__ = ["SHARED", "KERNEL_ONLY", "home_findings", "report_lines"]

#: Files and folders both programs read (and what sharing them means).
SHARED = {
    "config.yaml": "read by both; Hermes Agent's keys are mapped or listed under config",
    ".env": "read by both (API keys and settings)",
    "auth.json": "Hermes Agent's keys are used; nothing is written back unless asked",
    "memories": "MEMORY.md and USER.md: same format and § delimiter, read and written by both",
    "SOUL.md": "the persona: read by both",
    "skills": "user and agent-written skills: read by both",
    "plugins": "Hermes Agent memory-provider folders load unchanged",
    "logs": "both write their own log files here",
    "profiles": "profiles: one folder each, the same layout for both",
}
#: What only hermes-kernel writes in a shared home.
KERNEL_ONLY = {"hermes-kernel", "results", "active_profile"}
_STATE_FILES = {"state.db", "state.db-wal", "state.db-shm"}

Finding = tuple[str, str, "Callable[[], str] | None"]


def _kernel_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    from hermes.kernel.store.concurrency import connect_readonly

    conn = connect_readonly(path)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM sessions")}
    finally:
        conn.close()


def home_findings(app_state: Any) -> tuple[dict[str, Any], list[Finding]]:
    """The Hermes Agent section of the doctor's report, and its problems as ``(area, text, repair)``."""
    home = app_state.home
    report: dict[str, Any] = {"state_db": str(home.shared_state_db), "own_store": str(home.own_state_db)}
    findings: list[Finding] = []
    try:
        source = HermesStateDB(home.shared_state_db)
    except Exception as exc:  # noqa: BLE001 - doctor reports, never raises
        findings.append(("hermes agent", f"its state.db cannot be read: {exc}", None))
        return report, findings
    try:
        report["schema_version"] = source.schema_version
        ids: list[str] = []
        cursor = None
        while page := source.session_ids(after=cursor, limit=2000):
            ids += page
            cursor = page[-1]
    finally:
        source.close()
    try:
        have = _kernel_ids(home.own_state_db)
    except sqlite3.Error as exc:
        findings.append(("hermes agent", f"{home.own_state_db} cannot be read: {exc}", None))
        have = set()
    missing = [sid for sid in ids if sid not in have]
    report.update(sessions=len(ids), imported=len(ids) - len(missing), not_imported=len(missing))
    if missing:

        def repair() -> str:
            from .import_cmd import import_hermes

            result = import_hermes(app_state, home.shared_state_db, quiet=True)
            return f"imported {result['imported']} session(s) into {result['target']}"

        findings.append((
            "hermes agent",
            f"{len(missing)} of {len(ids)} session(s) in Hermes Agent's state.db are not in hermes-kernel's store yet; "
            "run `hermes import hermes`",
            repair,
        ))  # fmt: skip
    present = {p.name for p in home.path.iterdir()} if home.path.is_dir() else set()
    report["shared"] = {name: why for name, why in SHARED.items() if name in present}
    from .auth_store import describe_hermes_auth

    report["auth"] = describe_hermes_auth(home.path)
    report["not_used"] = sorted(present - set(SHARED) - KERNEL_ONLY - _STATE_FILES - {"state.db.lock", "state.db.lock-queue"})
    return report, findings


def report_lines(report: dict[str, Any]) -> list[str]:
    """The section as a person reads it."""
    lines = [f"hermes agent: this home is shared with Hermes Agent; its state.db (schema version "
             f"{report.get('schema_version', '?')}) is read, never written"]  # fmt: skip
    if "sessions" in report:
        lines.append(f"  history: {report['imported']} of {report['sessions']} session(s) imported into {report['own_store']}")
    for line in report.get("auth", []):
        lines.append(f"  auth.json: {line}")
    for name, why in report.get("shared", {}).items():
        lines.append(f"  shared:   {name}: {why}")
    if report.get("not_used"):
        lines.append(f"  not used: {', '.join(report['not_used'])} (Hermes Agent's own; hermes-kernel leaves them alone)")
    return lines
