"""``hermes plugin install`` of packages, planned before anything changes.

Three steps, so a bad install changes nothing and nothing replaces ``hermes``:

1. *resolve* with ``pip install --dry-run --report``. A package asked for that
   requires ``hermes-agent`` (Hermes Agent itself, whose console script is also
   called ``hermes``) is planned without that requirement: its other
   requirements are resolved instead, and it is installed with ``--no-deps``.
   Hermes Agent asked for by name, or needed by a dependency, is refused.
2. *fetch* every planned distribution as a wheel into a temporary folder
   (``pip wheel --no-deps``), and read each wheel's entry points: one that
   installs a ``hermes`` command of its own is refused.
3. *install* exactly those files with ``--no-index --no-deps`` (an editable
   project with ``--no-deps``, built in place). If that fails, what it had
   installed already is uninstalled again.

pip's own settings (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``)
apply to steps 1 and 2, as they would to a plain ``pip install``.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import HermesError

__all__ = ["HERMES_AGENT", "InstallPlan", "PipFailed", "install_plan", "plan_install"]

#: Hermes Agent's distribution: its ``hermes`` script would replace hermes-kernel's.
HERMES_AGENT = "hermes-agent"
_OWN = "hermes-kernel"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


class PipFailed(HermesError):
    """pip exited non-zero; ``output`` holds the tail of what it said."""

    def __init__(self, action: str, result: subprocess.CompletedProcess[str]) -> None:
        self.output = (result.stderr or result.stdout).strip().splitlines()[-15:]
        super().__init__(f"pip {action} failed with exit code {result.returncode}; see the pip output above")


class InstallPlan(NamedTuple):
    """What step 3 installs: resolved items (pip report entries) and who lost the ``hermes-agent`` requirement."""

    items: list[dict[str, Any]]
    without_hermes_agent: list[str]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args], capture_output=True, text=True
    )


def _resolve(requirements: list[str], *, upgrade: bool, work: Path, label: str) -> list[dict[str, Any]]:
    """pip's resolution of ``requirements`` (editable ones as ``-e``) without installing anything."""
    report = work / f"{label}.json"
    result = _pip("install", "--dry-run", "--quiet", *(["--upgrade"] if upgrade else []), "--report", str(report), *requirements)
    if result.returncode != 0:
        raise PipFailed("install", result)
    return list(json.loads(report.read_text(encoding="utf-8")).get("install", []))


def _requires(item: dict[str, Any]) -> list[str]:
    """What ``item`` requires when installed without extras (requirements of an extra are left out)."""
    found = item.get("metadata", {}).get("requires_dist") or []
    return [r for r in found if not re.search(r";.*\bextra\s*==", r)]


def _requirement_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return _norm(match.group(1)) if match else ""


def _name(item: dict[str, Any]) -> str:
    return _norm(item["metadata"]["name"])


def plan_install(specs: list[str], *, upgrade: bool, editable: bool, work: Path) -> InstallPlan:
    """Resolve ``specs``; drop a ``hermes-agent`` requirement (see the module docstring).

    The asked-for packages are read first on their own (``--no-deps``), so one that
    requires hermes-agent is found before pip would look for hermes-agent at all.
    """
    args: list[str] = []
    for spec in specs:
        args += ["-e", spec] if editable else [spec]
    # By name before pip looks for it (it may not even be reachable), and by what a path or URL turns out to be.
    by_name = any(_requirement_name(spec) == HERMES_AGENT and not Path(spec).exists() for spec in specs)
    heads = [] if by_name else _resolve([*args, "--no-deps"], upgrade=upgrade, work=work, label="heads")
    if by_name or any(_name(i) == HERMES_AGENT for i in heads):
        raise HermesError(
            "hermes-agent is Hermes Agent itself: its `hermes` command would replace hermes-kernel's, so it is not "
            "installed here; install the plugin packages written for it instead (hermes-kernel runs them)"
        )
    needing = [i for i in heads if any(_requirement_name(r) == HERMES_AGENT for r in _requires(i))]
    if needing:
        names = {_name(i) for i in needing}
        # Everything else that was asked for (exactly as resolved), plus what those packages need besides hermes-agent.
        again: list[str] = []
        for item in heads:
            if _name(item) not in names:
                path = _editable(item)
                again += ["-e", path] if path else [_source(item)]
        again += [r for i in needing for r in _requires(i) if _requirement_name(r) not in (HERMES_AGENT, *names)]
        rest = _resolve(again, upgrade=upgrade, work=work, label="rest") if again else []
    else:
        rest = _resolve(args, upgrade=upgrade, work=work, label="plan")
    if any(_name(i) == HERMES_AGENT for i in rest):
        via = sorted({i["metadata"]["name"] for i in rest if any(_requirement_name(r) == HERMES_AGENT for r in _requires(i))})
        raise HermesError(
            f"{', '.join(via) or 'a dependency'} requires hermes-agent, whose `hermes` command would replace "
            "hermes-kernel's; nothing was installed (install that package in an environment of its own)"
        )
    for item in needing:
        item["requested"] = True
    return InstallPlan([*rest, *needing], sorted(i["metadata"]["name"] for i in needing))


def _source(item: dict[str, Any]) -> str:
    """A requirement pip can fetch exactly this item from (``name @ url``, a VCS commit, or ``name==version``)."""
    info = item.get("download_info") or {}
    name, url = item["metadata"]["name"], info.get("url", "")
    vcs = info.get("vcs_info")
    if vcs:
        return f"{name} @ {vcs['vcs']}+{url}@{vcs['commit_id']}"
    if url:
        return f"{name} @ {url}"
    return f"{name}=={item['metadata']['version']}"


def _commands(wheel: Path) -> set[str]:
    """The console scripts a wheel installs."""
    with zipfile.ZipFile(wheel) as archive:
        found = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = archive.read(found[0]).decode("utf-8", "replace") if found else ""
    commands, section = set(), ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
        elif section in ("console_scripts", "gui_scripts") and "=" in line:
            commands.add(line.split("=", 1)[0].strip())
    return commands


def _editable(item: dict[str, Any]) -> str | None:
    info = item.get("download_info") or {}
    if (info.get("dir_info") or {}).get("editable"):
        url = str(info.get("url", ""))
        return url[len("file://") :] if url.startswith("file://") else url
    return None


def _installed() -> set[str]:
    return {_norm(d.metadata["Name"] or "") for d in metadata.distributions()}


def install_plan(plan: InstallPlan, *, work: Path) -> list[dict[str, Any]]:
    """Fetch, check and install ``plan``'s items (steps 2 and 3); the pip report of the install."""
    if not plan.items:
        return []
    wheels = work / "wheels"
    fetch = [i for i in plan.items if _editable(i) is None]
    if fetch:
        result = _pip("wheel", "--no-deps", "--quiet", "-w", str(wheels), *(_source(i) for i in fetch))
        if result.returncode != 0:
            raise PipFailed("install", result)
    files = sorted(wheels.glob("*.whl")) if wheels.exists() else []
    for wheel in files:
        owner = wheel.name.split("-", 1)[0].replace("_", "-")
        if "hermes" in _commands(wheel) and _norm(owner) != _OWN:
            raise HermesError(
                f"{owner} installs a `hermes` command of its own, which would replace hermes-kernel's; nothing was "
                f"installed (run it in an environment of its own, e.g. `pipx install {owner}`)"
            )
    before = _installed()
    done: list[dict[str, Any]] = []
    editables = [a for i in plan.items if (path := _editable(i)) for a in ("-e", path)]
    # The fetched wheels from their folder only; an editable project is built in place, and its build
    # backend comes from pip's usual index.
    steps = [("files", ["--no-index", *map(str, files)])] if files else []
    steps += [("editables", editables)] if editables else []
    for label, args in steps:
        report = work / f"install-{label}.json"
        result = _pip("install", "--no-deps", "--report", str(report), *args)
        if result.returncode != 0:
            _undo(before, (i["metadata"]["name"] for i in plan.items))
            raise PipFailed("install", result)
        done += json.loads(report.read_text(encoding="utf-8")).get("install", [])
    return done


def _undo(before: set[str], names: Iterable[str]) -> None:
    """Uninstall what a failed install had added (nothing half-installed stays behind)."""
    added = [n for n in names if _norm(n) not in before and _norm(n) in _installed()]
    if added:
        _pip("uninstall", "--yes", "--quiet", *added)
