"""``hermes skills list|show|install|remove|audit``."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from ..skills import SkillError, SkillsLibrary, install_skills, read_lock, remove_skill, scan_skill
from ..skills.install import InstallPlan
from ..skills.guard import TRUST_LEVELS
from ._state import AppState, print_json, report, state

__all__ = ["app"]

app = typer.Typer(help="List, show, install, remove and audit skills.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _library(app_state: AppState) -> SkillsLibrary:
    return SkillsLibrary.discover(app_state.home, app_state.config, app_state.host)


def _status(library: SkillsLibrary, skill: Any) -> str:
    if not library.is_enabled(skill):
        return "disabled"
    missing = skill.missing_prerequisites()
    return "unavailable: " + ", ".join(missing) if missing else "ok"


@app.command("list")
def list_(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List skills with source and status, then any invalid or shadowed ones."""
    app_state = state(ctx)
    library = _library(app_state)
    lock = read_lock(app_state.home)
    rows = []
    for skill in library.all():
        row = {**skill.as_dict(), "status": _status(library, skill)}
        if skill.name in lock and skill.source == "user":
            row["trust"] = lock[skill.name].get("trust")
            row["verdict"] = lock[skill.name].get("verdict")
            if lock[skill.name].get("forced"):
                row["forced"] = lock[skill.name]["forced"]
        rows.append(row)
    shadowed = [{"name": s.name, "source": s.source, "path": str(s.path)} for s in library.shadowed]
    invalid = [i.as_dict() for i in library.invalid]
    if as_json:
        print_json({"skills": rows, "shadowed": shadowed, "invalid": invalid})
        return
    if rows:
        # Plain aligned columns: a skill per line reads (and greps) better than a wrapped table.
        width = max(len(r["name"]) for r in rows)
        src = max(len(r["source"]) for r in rows)
        for r in rows:
            status = "" if r["status"] == "ok" else f" [{r['status']}]"
            if r.get("forced"):
                status += f" [{r['verdict']}, forced by {r['forced']['by']}: {_short(r['forced']['reason'], 60)}]"
            typer.echo(f"{r['name']:<{width}}  {r['source']:<{src}}  {_short(r['description'])}{status}")
    else:
        typer.echo("No skills found.")
    for item in shadowed:
        typer.echo(f"shadowed: {item['name']} ({item['source']}) at {item['path']}")
    for item in invalid:
        typer.echo(f"invalid: {item['path']}: {item['reason']}")


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Skill name.")],
    file: Annotated[Optional[str], typer.Option("--file", "-f", help="A support file, e.g. references/x.md.")] = None,
) -> None:
    """Print a skill's SKILL.md (or one support file) and list its support files."""
    app_state = state(ctx)
    skill = _library(app_state).get(name)
    if skill is None:
        raise SkillError(f"no skill named {name!r}; see `hermes skills list`")
    if file:
        from ..skills.manage import safe_support_path

        path = safe_support_path(skill.path, file)
        if not path.is_file():
            raise SkillError(f"{file} does not exist in skill {name!r}")
        typer.echo(path.read_text(encoding="utf-8", errors="replace"))
        return
    typer.echo(f"# {skill.name} ({skill.source}) — {skill.path}")
    entry = read_lock(app_state.home).get(skill.name) if skill.source == "user" else None
    if entry:
        typer.echo(f"# installed from {entry.get('source')} ({entry.get('trust')}, {entry.get('verdict')}) at {entry.get('installed_at')}")
        forced = entry.get("forced")
        if forced:
            typer.echo(f"# forced by {forced.get('by')} at {forced.get('at')}: {forced.get('reason')}")
            for finding in forced.get("findings", []):
                typer.echo(f"#   {finding}")
    typer.echo(skill.skill_md.read_text(encoding="utf-8"))
    files = skill.support_files()
    if files:
        typer.echo("support files: " + ", ".join(files))


def _report(plan: InstallPlan) -> None:
    typer.echo(f"{plan.name}: {plan.scan.summary()}", err=True)


@app.command("install")
def install(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A folder with skills, or a VCS URL (https://..., git+..., file://...; URL#subdir).")],
    category: Annotated[Optional[str], typer.Option("--category", "-c", help="Install under this category folder.")] = None,
    trust: Annotated[Optional[str], typer.Option("--trust", help="Trust level: trusted or community (default: by skills.trusted_sources).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Install despite the guard's verdict (even 'dangerous') and replace an installed skill; needs --reason.")] = False,
    reason: Annotated[Optional[str], typer.Option("--reason", help="Why you accept the skill; recorded with your user name in the lock file.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Stage skills in quarantine, scan them, apply the trust policy, then install and record them."""
    if trust is not None and trust not in ("trusted", "community"):
        raise SkillError(f"--trust must be trusted or community (known levels: {', '.join(TRUST_LEVELS)})")
    if force and reason is None:
        raise SkillError("--force needs --reason TEXT saying why you accept this skill (it is recorded in the lock file)")
    if reason is not None and not force:
        raise SkillError("--reason goes with --force; without --force the guard's verdict stands")
    app_state = state(ctx)

    def confirm(plan: InstallPlan) -> bool:
        if not sys.stdin.isatty():
            return False
        return typer.confirm(f"Install {plan.name} despite a {plan.scan.verdict} verdict?", default=False)

    entries = install_skills(
        app_state.home, source, config=app_state.config, host=app_state.host, trust=trust,
        category=category, force=force, reason=reason, confirm=confirm, report=_report,
    )
    if as_json:
        print_json(entries)
        return
    for entry in entries:
        forced = entry.get("forced")
        note = f"; forced by {forced['by']}: {forced['reason']}" if forced else ""
        typer.echo(f"installed {entry['name']} ({entry['trust']}, {entry['verdict']}{note}) at {entry['path']}")


@app.command("remove")
def remove(ctx: typer.Context, name: Annotated[str, typer.Argument(help="Skill name.")], as_json: JsonFlag = False) -> None:
    """Delete a skill from HERMES_HOME/skills (bundled and external skills cannot be removed)."""
    app_state = state(ctx)
    path = remove_skill(app_state.home, name, config=app_state.config, host=app_state.host)
    report(as_json, f"removed {name} ({path})", {"removed": name, "path": str(path)})


@app.command("audit")
def audit(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(help="Only this skill.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Scan skills with the guard; exit 1 when any is dangerous."""
    app_state = state(ctx)
    library = _library(app_state)
    skills = library.all()
    if name is not None:
        skills = [s for s in skills if s.name == name]
        if not skills:
            raise SkillError(f"no skill named {name!r}; see `hermes skills list`")
    results = [(skill, scan_skill(skill.path)) for skill in skills]
    if as_json:
        print_json([{"name": s.name, "source": s.source, **r.as_dict()} for s, r in results])
    else:
        for skill, result in results:
            typer.echo(f"{skill.name} ({skill.source}): {result.summary()}")
    if any(r.verdict == "dangerous" for _, r in results):
        raise typer.Exit(1)
