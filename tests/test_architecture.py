"""The layering of docs/architecture.md holds in the code's imports, and no import cycle exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.import_graph import ROOT, TOP_FOLDERS, cycles, import_graph

DOC = ROOT / "docs" / "architecture.md"
KERNEL = "hermes.kernel"
SIZE_LIMIT = 600


def _section(title: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("| ") and not line.startswith("|--")]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([a-z_.*]+)`", cell)


def floors() -> dict[str, int]:
    """Kernel package (or ``hermes.kernel.*`` for kernel/'s own modules) -> its floor."""
    table: dict[str, int] = {}
    for line in _section("Inside the kernel")[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in _names(cells[1]):
            table[name] = int(cells[0])
    return table


def beside() -> list[str]:
    return [_names(line.split("|")[1])[0] for line in _section("Beside the kernel")[1:]]


def known_arrows() -> set[tuple[str, str]]:
    arrows = set()
    for line in _section("Known arrows out of the kernel")[1:]:
        cells = line.strip("|").split("|")
        for source in _names(cells[0]):
            arrows.update((source, target) for target in _names(cells[1]))
    return arrows


def floor_of(module: str, table: dict[str, int]) -> int:
    if module in table:
        return table[module]
    parts = module.split(".")
    package = ".".join(parts[:3])
    if package in table and (ROOT / "kernel" / parts[2]).is_dir():
        return table[package]
    return table[f"{KERNEL}.*"]


GRAPH = import_graph()


def test_the_graph_sees_deferred_imports_and_skips_type_checking(tmp_path: Path) -> None:
    kernel = tmp_path / "kernel"
    (kernel / "sub").mkdir(parents=True)
    (kernel / "__init__.py").write_text("")
    (kernel / "a.py").write_text("def f():\n    from .b import x\n")
    (kernel / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\nfrom .sub import c\n")
    (kernel / "sub" / "__init__.py").write_text("")
    (kernel / "sub" / "c.py").write_text("import hermes.kernel.a\n")
    graph = import_graph(tmp_path)
    assert graph["hermes.kernel.a"] == {"hermes.kernel.b"}
    assert graph["hermes.kernel.b"] == {"hermes.kernel.sub.c"}
    assert cycles(graph) == [["hermes.kernel.a", "hermes.kernel.b", "hermes.kernel.sub.c"]]


def test_no_import_cycles() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles (give the shared part its own module, or pass it in): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_the_doc_names_every_kernel_package() -> None:
    table = floors()
    packages = {f"{KERNEL}.{p.name}" for p in (ROOT / "kernel").iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(table), f"docs/architecture.md gives no floor to {sorted(packages - set(table))}"
    assert f"{KERNEL}.*" in table and set(table.values()) == set(range(1, max(table.values()) + 1))


def test_kernel_modules_import_only_their_floor_or_below() -> None:
    table = floors()
    wrong = [
        f"{module} (floor {floor_of(module, table)}) imports {target} (floor {floor_of(target, table)})"
        for module, targets in GRAPH.items() if module.startswith(KERNEL)
        for target in targets if target.startswith(KERNEL) and floor_of(target, table) > floor_of(module, table)
    ]  # fmt: skip
    assert not wrong, "\n".join(wrong)


def test_the_kernel_imports_no_plugin_and_no_new_arrow_to_compat() -> None:
    allowed = known_arrows()
    wrong = [
        f"{module} imports {target}"
        for module, targets in GRAPH.items() if module.startswith(KERNEL)
        for target in targets if not target.startswith(KERNEL) and (module, target) not in allowed
    ]  # fmt: skip
    assert not wrong, "\n".join(wrong)
    stale = {(m, t) for m, t in allowed if t not in GRAPH.get(m, set())}
    assert not stale, f"docs/architecture.md lists arrows the code no longer has: {sorted(stale)}"


@pytest.mark.parametrize("package", beside())
def test_packages_beside_the_kernel_import_only_the_kernel(package: str) -> None:
    others = [p for p in beside() if p != package]
    wrong = [
        f"{module} imports {target}"
        for module, targets in GRAPH.items() if module == package or module.startswith(package + ".")
        for target in targets if any(target == o or target.startswith(o + ".") for o in others)
    ]  # fmt: skip
    assert not wrong, "\n".join(wrong)


def test_plugins_stand_alone() -> None:
    def plugin(module: str) -> str:
        return ".".join(module.split(".")[:3])

    wrong = [
        f"{module} imports {target}"
        for module, targets in GRAPH.items() if module.startswith("hermes.plugins.")
        for target in targets
        if target.startswith("hermes.plugins.") and plugin(target) != plugin(module)
    ]  # fmt: skip
    assert not wrong, "\n".join(wrong)


def test_code_beside_the_kernel_uses_only_public_kernel_names() -> None:
    folders = {name: folder for folder, name in TOP_FOLDERS.items()}
    wrong = []
    for package in beside():
        folder = folders[package]
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith(KERNEL):
                    private = [a.name for a in node.names if a.name.startswith("_") and not a.name.endswith("__")]
                    if any(part.startswith("_") for part in node.module.split(".")) or private:
                        wrong.append(f"{path.relative_to(ROOT)}: from {node.module} import {', '.join(private) or '…'}")
    assert not wrong, "\n".join(wrong)


def _sources() -> list[Path]:
    return [p for folder in ("kernel", "plugins", "context_engines", "memory_providers") for p in (ROOT / folder).rglob("*.py")]


def test_no_module_is_over_the_size_limit() -> None:
    big = {str(p.relative_to(ROOT)): n for p in _sources() if (n := len(p.read_text(encoding="utf-8").splitlines())) > SIZE_LIMIT}
    assert not big, f"split these modules by concern (limit {SIZE_LIMIT} lines): {big}"
