"""The import graph of this repository's code, read from the source with :mod:`ast`.

Every ``import`` counts, module level or inside a function (deferring an import
hides a cycle from Python, not from the design), except those under
``if TYPE_CHECKING:``, which never run. Used by tests/test_architecture.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ROOT", "TOP_FOLDERS", "cycles", "import_graph"]

ROOT = Path(__file__).resolve().parent.parent
#: folder -> import name (ARCHITECTURE.md §1); ``bench`` is imported as itself.
TOP_FOLDERS = {
    "kernel": "hermes.kernel",
    "plugins": "hermes.plugins",
    "context_engines": "hermes.context_engines",
    "memory_providers": "hermes.memory_providers",
    "compat": "hermes.compat",
    "skills": "hermes.skills",
    "bench": "bench",
}


def _modules(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, name in TOP_FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            if folder == "bench" and "results" in path.relative_to(root / folder).parts:
                continue  # benchmark output: the llm venv the oneshot bench installs lives there
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([name, *parts])] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        stack.extend(ast.iter_child_nodes(node))


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _nearest(name: str, modules: dict[str, Path]) -> str | None:
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) if parts else None


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module name -> the names of this repository's modules it imports."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(filter(None, (_nearest(alias.name, modules) for alias in node.names)))
                continue
            base = _absolute(module, is_package, node)
            for alias in node.names:
                # `from pkg import sub` imports the submodule when there is one, else a name of pkg.
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else _nearest(base, modules)
                if target:
                    targets.add(target)
        targets.discard(module)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
