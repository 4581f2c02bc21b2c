"""``hermes doctor [--fix] [--json]``: check everything that can be checked, repair what can be repaired.

Checks: the config against the schema (values, unknown keys, plugin names),
every plugin's load error, state.db (``quick_check``, FTS consistency, WAL
size), permissions of the secret files, an API key per configured provider,
and stale key leases in auth.json. ``--fix`` salvages a damaged state.db,
rebuilds FTS indexes, checkpoints a large WAL, tightens permissions and drops
stale leases. Any problem left means exit 1.
"""

from __future__ import annotations

import os
import platform
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from .._version import __version__
from ..errors import HermesError
from ._state import AppState, print_json, print_table, state

__all__ = ["doctor"]

# A WAL beyond this is not being checkpointed (a stuck reader, or a crash); --fix truncates it.
WAL_LIMIT_BYTES = 64 * 1024 * 1024


@dataclass
class Finding:
    """One problem: what is wrong, and the repair ``--fix`` runs (None: the user must act)."""

    area: str
    text: str
    repair: Callable[[], str] | None = None
    fixed: str | None = None
    note: bool = False  # information only (Hermes Agent keys the kernel does not use): not a problem

    def line(self) -> str:
        return f"{self.area}: {self.text}"


def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    fix: Annotated[bool, typer.Option("--fix", help="Repair what can be repaired (state.db, permissions, leases).")] = False,
) -> None:
    """Check config, plugins, state.db, permissions and API keys; --fix repairs what it can."""
    app_state = state(ctx)
    home = app_state.home
    config_error = app_state.config_error
    host = app_state.host
    host.load_plugins()
    plugins = host.installed(check=True)
    findings: list[Finding] = []
    if config_error:
        findings.append(Finding("config", str(config_error)))
    else:
        findings += _config_findings(app_state)
        findings += _credential_findings(app_state)
        findings += _memory_findings(app_state)
    findings += [Finding(f"plugin {p.group}:{p.name}", str(p.error)) for p in plugins if p.error]
    store = [] if config_error else _store_checks(app_state)
    findings += [Finding(f"store {c['name']}", c["detail"]) for c in store if not c["ok"]]
    from ..store.salvage import DbHealth, check_database

    shared_with = _foreign_kind(home.shared_state_db)
    hermes_agent: dict[str, Any] | None = None
    if shared_with is not None and shared_with.startswith("Hermes Agent"):
        # A home Hermes Agent uses too: described by the compatibility layer, loaded only here.
        from hermes.compat.hermes.home_report import home_findings

        hermes_agent, extra = home_findings(app_state)
        findings += [Finding(area, text, repair) for area, text, repair in extra]
    # Another program's file is never checked or repaired here: only the kernel's own store is.
    own = home.state_db if home.state_db != home.shared_state_db or shared_with is None else None
    db = check_database(own) if own is not None else DbHealth(home.own_state_db, False)
    findings += _database_findings(db)
    findings += _permission_findings(app_state)
    findings += _lease_findings(app_state)
    if fix:
        for finding in findings:
            if finding.repair is not None:
                try:
                    finding.fixed = finding.repair()
                except (OSError, HermesError, ValueError) as exc:  # sqlite3.Error is an Exception too
                    finding.text += f" (--fix failed: {exc})"
                except Exception as exc:  # noqa: BLE001 - a repair that fails is reported, never a traceback
                    finding.text += f" (--fix failed: {type(exc).__name__}: {exc})"
        if any(f.fixed for f in findings if f.area in ("state.db", "hermes agent")):
            db = check_database(home.state_db) if home.state_db != home.shared_state_db or shared_with is None else db
        if hermes_agent is not None and any(f.fixed for f in findings if f.area == "hermes agent"):
            hermes_agent, _ = home_findings(app_state)
    left = [f for f in findings if not f.fixed and not f.note]
    report: dict[str, Any] = {
        "version": __version__,
        "python": platform.python_version(),
        "home": str(home.path),
        "profile": home.profile,
        "config_file": str(home.config_path),
        "config_exists": home.config_path.exists(),
        "config_error": str(config_error) if config_error else None,
        "load_plugins": os.environ.get("HERMES_LOAD_PLUGINS"),
        "plugins": [p.as_dict() for p in plugins],
        "hook_failures": [f.as_dict() for f in host.hook_failures],
        "database": db.as_dict(),
        "hermes_agent": hermes_agent,
        "store": store,
        "fixed": [f"{f.line()} -> {f.fixed}" for f in findings if f.fixed],
        "notes": [f.line() for f in findings if f.note],
        "problems": [f.line() + ("" if f.repair is None or fix else " (`hermes doctor --fix` repairs it)") for f in left],
        "ok": not left,
    }
    if as_json:
        print_json(report)
    else:
        _print_report(report)
    if left:
        raise typer.Exit(1)


def _foreign_kind(path: Any) -> str | None:
    """What wrote ``path`` when that was another program (see :mod:`hermes.kernel.store.foreign`)."""
    import sqlite3

    from ..store.concurrency import connect_readonly
    from ..store.foreign import foreign_schema

    if not path.is_file():
        return None
    try:
        conn = connect_readonly(path)
        try:
            return foreign_schema(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return None  # a damaged file: the database checks say so


def _store_checks(app_state: Any) -> list[dict[str, Any]]:
    """The session store's own checks: where it is, connectivity, migrations, extensions."""
    from ..errors import HermesError
    from ..store import open_store, store_settings

    try:
        settings = store_settings(app_state.config)
        if settings.backend == "sqlite" and not settings.url:
            # The default state.db: its integrity, indexes and WAL are the database checks' job,
            # which also work on a damaged file or in a read-only home.
            state_db = app_state.home.state_db
            detail = f"sqlite {state_db}" + ("" if state_db.exists() else " (not created yet)")
            return [{"name": "store", "ok": True, "detail": detail}]
        store = open_store(app_state.config, app_state.home, app_state.host)
    except HermesError as exc:
        return [{"name": "store", "ok": False, "detail": str(exc)}]
    with store:
        return [check.as_dict() for check in store.health()]


def _config_findings(app_state: AppState) -> list[Finding]:
    """Schema problems and possible typos; a file shared with Hermes Agent is read through its translation.

    Its keys are never typos: a mapped one is applied, an unused one is named
    once in a note (grouped by why it is unused), a bad value is one problem.
    """
    from ..config import read_config_file
    from ..config_schema import ConfigSchema

    schema = ConfigSchema.from_host(app_state.host)
    findings = []
    path = app_state.home.config_path
    try:
        raw = read_config_file(path)
    except HermesError as exc:
        return [Finding("config", str(exc))]
    config = app_state.config
    hermes = config.hermes
    data = hermes.data if hermes is not None else raw
    try:
        schema.validate(data, where=f"{path}: ")  # plugins' keys too, which loading alone cannot check
    except HermesError as exc:
        findings.append(Finding("config", str(exc)))
    for key in schema.unknown(data):
        findings.append(Finding("config", f"{path}: unknown key {key!r}{schema.suggest(key)}; remove it or fix its name"))
    if hermes is not None:
        findings += [Finding("config", line) for line in [*hermes.problems, *hermes.deferred.values()]]
        by_reason: dict[str, list[str]] = {}
        for key, reason in hermes.unused.items():
            by_reason.setdefault(reason, []).append(key)
        findings += [Finding("config", f"Hermes Agent key(s) hermes-kernel does not use: {', '.join(keys)} ({reason})",
                             note=True) for reason, keys in by_reason.items()]  # fmt: skip
        findings += [Finding("config", f"Hermes Agent key {key} is not used: {kernel} is set, and the kernel's own key wins",
                             note=True) for key, kernel in hermes.shadowed.items()]  # fmt: skip

    def available(group: str) -> list[str]:
        names = app_state.host.available(group)
        return [*names, "memory"] if group == "hermes.tools" else names

    plugin_lines = schema.check_plugins(config.as_dict(), available)
    findings += [Finding("config", text) for text in plugin_lines if text.split(":", 1)[0] not in config.deferred]
    return findings


def _memory_findings(app_state: AppState) -> list[Finding]:
    """The selected memory provider, loaded as ``hermes chat`` loads it: what would be left out, and why.

    The plugin table only compiles a folder provider; importing it and asking
    ``is_available()`` (no network) is what says whether a chat would use it.
    """
    from ..memory import MemoryManager

    name = str(app_state.config.get("memory.provider", "") or "")
    if not name:
        return []
    import logging

    quiet = logging.getLogger("hermes.kernel.memory.manager")
    before, quiet.disabled = quiet.disabled, True  # the finding below says it once
    try:
        manager = MemoryManager.from_config(app_state.host, app_state.config, app_state.home)
    except HermesError as exc:
        return [Finding("memory", f"memory.provider {name!r}: {exc}")]
    finally:
        quiet.disabled = before
    return [Finding("memory", f"memory provider {skipped!r} would be left out of chats: {why}; check "
                    f"`hermes memory setup {skipped}` and its dependencies") for skipped, why in manager.skipped.items()]


def _credential_findings(app_state: AppState) -> list[Finding]:
    from ..credentials.pool import CredentialPool
    from .auth import env_name_for

    config = app_state.config
    providers = {str(config.get("model.provider", "") or "")}
    for key in ("auxiliary.compression.provider", "delegation.provider"):
        providers.add(str(config.get(key, "") or ""))
    findings = []
    for provider in sorted(p for p in providers if p):
        try:
            env = env_name_for(app_state, provider)
            pool = CredentialPool(provider, home=app_state.home, config_keys=config.get(f"credentials.{provider}", None), env_name=env)
            if pool.credentials():
                continue
        except HermesError as exc:
            findings.append(Finding("credentials", str(exc)))
            continue
        findings.append(Finding(
            "credentials",
            f"no API key for {provider}: set {env} (`hermes config set {env} KEY`) or run `hermes auth add {provider}`",
        ))  # fmt: skip
    return findings


def _database_findings(db: Any) -> list[Finding]:
    from ..store.salvage import NOT_A_FILE, move_aside, rebuild_fts, salvage_database

    path = db.path
    if not db.exists:
        return []
    if db.damaged == NOT_A_FILE:
        def aside() -> str:
            return f"moved it to {move_aside(path).name}; a fresh {path.name} is created by the next command"

        return [Finding("state.db", f"{path}: {NOT_A_FILE}", aside)]
    if db.damaged:
        def salvage() -> str:
            report = salvage_database(path)
            return (f"saved {report.sessions} sessions and {report.messages} messages into a fresh {path.name}; "
                    f"the damaged file is {report.broken_copy}")  # fmt: skip

        return [Finding("state.db", f"{path} is damaged: {db.damaged}", salvage)]
    findings = []
    if db.fts_problems:
        findings.append(Finding(
            "state.db", f"search index out of step with the messages ({db.fts_problems[0]})",
            lambda: "rebuilt " + ", ".join(rebuild_fts(path)),
        ))  # fmt: skip
    if db.wal_bytes > WAL_LIMIT_BYTES:
        def checkpoint() -> str:
            import sqlite3

            conn = sqlite3.connect(str(path))
            try:
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            finally:
                conn.close()
            if busy:
                raise HermesError("another process is using the database; close it and run --fix again")
            return "checkpointed and truncated the WAL"

        findings.append(Finding("state.db", f"write-ahead log is {db.wal_bytes // 1_048_576} MB (not checkpointed)", checkpoint))
    return findings


def _permission_findings(app_state: AppState) -> list[Finding]:
    from ..credentials.sources import auth_kind, kernel_auth_path

    findings = []
    home = app_state.home
    own_auth = kernel_auth_path(home.path)
    paths = [home.env_path, own_auth]
    if own_auth != home.auth_path:
        paths.append(home.auth_path)
    for path in paths:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077 and path == home.auth_path and auth_kind(path) == "hermes-agent":
            # Hermes Agent's file: said, never changed by --fix.
            findings.append(Finding("permissions", f"{path} (Hermes Agent's) holds secrets but has mode {mode:04o}; "
                                    f"run `chmod 600 {path}`"))  # fmt: skip
        elif mode & 0o077:
            def tighten(path: Any = path) -> str:
                os.chmod(path, 0o600)
                return "mode set to 0600"

            findings.append(Finding("permissions", f"{path} holds secrets but has mode {mode:04o}; it should be 0600", tighten))
    return findings


def _lease_findings(app_state: AppState) -> list[Finding]:
    from ..credentials.store import AuthStore

    from ..credentials.sources import kernel_auth_path

    store = AuthStore(kernel_auth_path(app_state.home.path))  # the kernel's own leases, never Hermes Agent's file
    try:
        data = store.read()
    except HermesError as exc:
        return [Finding("auth.json", str(exc))]
    now = time.time()
    stale = sum(1 for held in data.get("leases", {}).values() if isinstance(held, dict)
                for expires in held.values() if not isinstance(expires, (int, float)) or expires <= now)  # fmt: skip
    if not stale:
        return []

    def drop() -> str:
        def change(data: dict[str, Any]) -> int:
            dropped = 0
            for kid, held in list(data.get("leases", {}).items()):
                live = {k: v for k, v in held.items() if isinstance(v, (int, float)) and v > time.time()}
                dropped += len(held) - len(live)
                if live:
                    data["leases"][kid] = live
                else:
                    data["leases"].pop(kid)
            return dropped

        return f"removed {store.update(change)} stale lease(s)"

    return [Finding("auth.json", f"{stale} stale key lease(s) left by processes that ended", drop)]


def _print_report(report: dict[str, Any]) -> None:
    echo = typer.echo
    echo(f"hermes-kernel {report['version']} on Python {report['python']}")
    echo(f"home:    {report['home']} (profile {report['profile']})")
    if report["config_error"]:
        echo(f"config:  error: {report['config_error']}")
    elif report["config_exists"]:
        echo(f"config:  {report['config_file']} (ok)")
    else:
        echo(f"config:  {report['config_file']} (not created yet: using defaults)")
    db = report["database"]
    if not db["exists"]:
        echo("state.db: not created yet")
    elif db["damaged"]:
        echo(f"state.db: {db['path']} (damaged)")
    else:
        echo(f"state.db: {db['path']} ({db['sessions']} sessions, {db['messages']} messages, "
             f"WAL {db['wal_bytes'] // 1024} KB)")  # fmt: skip
    if report.get("hermes_agent"):
        from hermes.compat.hermes.home_report import report_lines

        for line in report_lines(report["hermes_agent"]):
            echo(line)
    load = report["load_plugins"]
    echo(
        "plugins: "
        + ("all installed plugins load" if load is None else f"HERMES_LOAD_PLUGINS={load!r} (built-ins always load)")
    )
    rows = report["plugins"]
    if rows:
        print_table(
            ["group", "name", "distribution", "version", "status"],
            [
                [
                    r["group"],
                    r["name"],
                    r["distribution"],
                    r["version"],
                    f"error: {r['error']}" if r["error"] else ("ok" if r["enabled"] else "disabled"),
                ]
                for r in rows
            ],
        )
    for check in report["store"]:
        echo(f"store:   {check['name']}: {check['detail']}" + ("" if check["ok"] else " (problem)"))
    for failure in report["hook_failures"]:
        echo(f"hook failure: {failure['hook']} in {failure['plugin']}: {failure['error']}")
    for fixed in report["fixed"]:
        echo(f"fixed: {fixed}")
    for note in report["notes"]:
        echo(f"note: {note}")
    for problem in report["problems"]:
        echo(f"problem: {problem}")
    echo("everything looks fine" if report["ok"] else f"{len(report['problems'])} problem(s) found")
