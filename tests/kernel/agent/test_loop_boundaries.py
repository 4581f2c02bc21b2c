"""The loop stays the short story of a turn: nothing outside it reaches into the agent's private names."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LOOP = ROOT / "kernel" / "agent" / "loop.py"


def _agent_privates() -> set[str]:
    """Every ``_name`` the Agent class defines: its private methods and the ``self._x`` it assigns."""
    tree = ast.parse(LOOP.read_text(encoding="utf-8"))
    agent = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Agent")
    names = {n.name for n in agent.body if isinstance(n, ast.FunctionDef) and n.name.startswith("_") and not n.name.startswith("__")}
    for node in ast.walk(agent):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            if node.attr.startswith("_") and not node.attr.startswith("__") and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return names


def _reaching_in(path: Path, privates: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in privates:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("loop"):
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: import {a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_the_agent_has_private_names_to_guard() -> None:
    assert {"_interrupt", "_ended", "_run_steps"} <= _agent_privates()  # the scan below sees real names


def test_no_module_outside_the_loop_reaches_into_its_private_names() -> None:
    privates = _agent_privates()
    files = [p for folder in ("kernel", "plugins", "compat", "tests") for p in (ROOT / folder).rglob("*.py")
             if p != LOOP and ".venv" not in p.parts]  # fmt: skip
    assert len(files) > 100
    assert [hit for path in files for hit in _reaching_in(path, privates)] == []


def test_the_loop_stays_a_short_story() -> None:
    assert len(LOOP.read_text(encoding="utf-8").splitlines()) <= 400
