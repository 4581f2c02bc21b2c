"""The install plan of ``hermes plugin install`` (kernel/cli/_pip_plan.py), with pip's answers scripted.

pip's report entries are written the way ``pip install --dry-run --report``
writes them, so the planning rules are pinned without a network or a real
install (tests/e2e/test_pypi_plugins.py runs the same path with real pip).
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel.cli import _pip_plan
from hermes.kernel.errors import HermesError


def item(name: str, *requires: str, requested: bool = False, version: str = "1.0") -> dict[str, Any]:
    return {"metadata": {"name": name, "version": version, "requires_dist": list(requires)}, "requested": requested,
            "download_info": {"url": f"https://files.example/{name}-{version}-py3-none-any.whl", "archive_info": {}}}  # fmt: skip


class ScriptedResolver:
    """Answers ``_resolve`` calls in order and records what each was asked."""

    def __init__(self, *answers: list[dict[str, Any]]) -> None:
        self.answers = list(answers)
        self.asked: list[list[str]] = []

    def __call__(self, requirements: list[str], *, upgrade: bool, work: Path, label: str) -> list[dict[str, Any]]:
        self.asked.append(list(requirements))
        return self.answers.pop(0)


def test_a_package_requiring_hermes_agent_is_planned_without_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    heads = [item("tiered", "hermes-agent>=0.7.0", "httpx>=0.25", 'pytest; extra == "dev"', requested=True),
             item("plain", requested=True)]  # fmt: skip
    resolver = ScriptedResolver(heads, [item("plain", requested=True), item("httpx", "idna"), item("idna")])
    monkeypatch.setattr(_pip_plan, "_resolve", resolver)
    plan = _pip_plan.plan_install(["tiered", "plain"], upgrade=False, editable=False, work=tmp_path)
    assert resolver.asked[0] == ["tiered", "plain", "--no-deps"]
    # The second resolution: the other package exactly as resolved, and tiered's needs but hermes-agent and extras.
    assert resolver.asked[1] == ["plain @ https://files.example/plain-1.0-py3-none-any.whl", "httpx>=0.25"]
    assert [i["metadata"]["name"] for i in plan.items] == ["plain", "httpx", "idna", "tiered"]
    assert plan.without_hermes_agent == ["tiered"] and plan.items[-1]["requested"]


def test_a_plan_without_hermes_agent_is_pip_s_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    full = [item("okf", "pyyaml", requested=True), item("pyyaml")]
    resolver = ScriptedResolver([item("okf", "pyyaml", requested=True)], full)
    monkeypatch.setattr(_pip_plan, "_resolve", resolver)
    plan = _pip_plan.plan_install(["okf"], upgrade=True, editable=False, work=tmp_path)
    assert resolver.asked == [["okf", "--no-deps"], ["okf"]]
    assert plan == _pip_plan.InstallPlan(full, [])


@pytest.mark.parametrize("spec", ["hermes-agent", "hermes_agent==0.19.0", "Hermes.Agent[all]>=0.18"])
def test_hermes_agent_by_name_is_refused_before_pip_is_asked(spec: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    resolver = ScriptedResolver()
    monkeypatch.setattr(_pip_plan, "_resolve", resolver)
    with pytest.raises(HermesError, match="hermes-agent is Hermes Agent itself"):
        _pip_plan.plan_install([spec], upgrade=False, editable=False, work=tmp_path)
    assert resolver.asked == []


def test_a_dependency_requiring_hermes_agent_refuses_the_whole_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    resolver = ScriptedResolver([item("top", "middle", requested=True)],
                                [item("top", "middle", requested=True), item("middle", "hermes-agent"), item("hermes-agent")])  # fmt: skip
    monkeypatch.setattr(_pip_plan, "_resolve", resolver)
    with pytest.raises(HermesError, match=r"^middle requires hermes-agent, whose `hermes` command would replace"):
        _pip_plan.plan_install(["top"], upgrade=False, editable=False, work=tmp_path)


def test_a_failed_install_uninstalls_what_it_had_added(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[tuple[str, ...]] = []
    present = {"already-here"}

    def pip(*args: str) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        if args[0] == "wheel":  # what `pip wheel -w DIR` leaves: the planned wheel
            folder = Path(args[args.index("-w") + 1])
            folder.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(folder / "new_one-1.0-py3-none-any.whl", "w") as wheel:
                wheel.writestr("new_one-1.0.dist-info/METADATA", "Name: new-one\nVersion: 1.0\n")
            return subprocess.CompletedProcess(args, 0, "", "")
        if args[0] == "install":
            present.add("new-one")  # pip got as far as one package, then failed
            return subprocess.CompletedProcess(args, 1, "", "ERROR: disk full\n")
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(_pip_plan, "_pip", pip)
    monkeypatch.setattr(_pip_plan, "_installed", lambda: set(present))
    plan = _pip_plan.InstallPlan([item("new-one", requested=True), item("already-here")], [])
    with pytest.raises(_pip_plan.PipFailed) as failed:
        _pip_plan.install_plan(plan, work=tmp_path)
    assert failed.value.output == ["ERROR: disk full"]
    assert calls[-2][:2] == ("install", "--no-deps") and "--no-index" in calls[-2]
    assert calls[-1] == ("uninstall", "--yes", "--quiet", "new-one")  # never what was there before
