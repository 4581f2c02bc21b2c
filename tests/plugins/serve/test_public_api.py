"""The serve plugin uses only the kernel's public API and has no import cycle."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SERVE = Path(__file__).resolve().parents[3] / "plugins" / "serve"
MODULES = sorted(SERVE.glob("*.py"))


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names) of every import in ``path``, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: resolved against hermes.plugins.serve
                module = ".".join(["hermes", "plugins", "serve"][: 4 - node.level] + ([module] if module else []))
            found.append((node.lineno, module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
    return found


def test_the_modules_are_all_found() -> None:
    assert {"app.py", "cli.py", "dashboard.py", "state.py", "server.py"} <= {p.name for p in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_kernel_imports_are_public_names(path: Path) -> None:
    private = []
    for line, module, names in _imports(path):
        if not module.startswith("hermes.kernel"):
            assert not module.startswith(("hermes.plugins.", "hermes.compat")) or module.startswith("hermes.plugins.serve"), module
            continue
        public = getattr(importlib.import_module(module), "__all__", ())
        if any(part.startswith("_") for part in module.split(".")) or not names:
            private.append(f"{path.name}:{line}: {module}")
        private += [f"{path.name}:{line}: {module}.{name}" for name in names if name not in public]
    assert private == []


def test_no_import_cycle_even_through_function_level_imports() -> None:
    graph = {
        path.stem: {m.rsplit(".", 1)[-1] for _, m, names in _imports(path) if m.startswith("hermes.plugins.serve.")}
        | {n for _, m, names in _imports(path) if m == "hermes.plugins.serve" for n in names}
        for path in MODULES
    }
    cycles = []

    def visit(node: str, trail: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in trail:
                cycles.append(" -> ".join([*trail[trail.index(nxt):], nxt]))
            elif nxt in graph:
                visit(nxt, [*trail, nxt])

    for start in graph:
        visit(start, [start])
    assert graph["dashboard"] >= {"state"} and "app" not in graph["dashboard"]
    assert cycles == []
