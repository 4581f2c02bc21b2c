"""Inside the workspace means below it, part by part: a sibling whose name starts with the workspace's is outside.

A planted bug that checked containment by string prefix (``str(path).startswith(str(root))``)
went uncaught: ``/tmp/x/ws-evil`` starts with ``/tmp/x/ws``. Every place that decides "inside"
is pinned here against such a sibling: the path policy of the file tools (the working directory,
``tools.allowed_paths``, saved results), a server's confinement (``resolve_path``, the terminal's
``workdir``) and the terminal's command rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.kernel import Config, HermesHome, ToolContext, ToolError
from hermes.kernel.command_safety import approval_reason
from hermes.kernel.paths_policy import check_path, is_inside
from hermes.plugins.tools._common import resolve_path
from hermes.plugins.tools.files import read_file, search_files, write_file
from hermes.plugins.tools.terminal import terminal


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace ``ws`` beside its evil twins ``ws-evil`` and ``wsx``, each holding a file."""
    for name in ("ws", "ws-evil", "wsx", "shared", "shared-evil"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_text(f"in {name}\n")
    return tmp_path / "ws"


def test_is_inside_compares_parts_not_text(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    assert is_inside(root, root) and is_inside(root / "a" / "b", root)
    for sibling in (tmp_path / "ws-evil", tmp_path / "wsx", tmp_path / "ws-evil" / "f.txt", tmp_path):
        assert not is_inside(sibling, root), sibling


@pytest.mark.parametrize("write", [False, True])
def test_file_tools_treat_a_sibling_as_outside(ws: Path, write: bool) -> None:
    ctx = ToolContext(cwd=ws)
    check_path(ctx, ws / "f.txt", "f.txt", write=write)
    for raw in ("../ws-evil/f.txt", "../wsx/f.txt", str(ws) + "-evil/f.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            check_path(ctx, (ws / raw).resolve() if not raw.startswith("/") else Path(raw), raw, write=write)


def test_read_and_write_file_refuse_the_sibling(ws: Path) -> None:
    ctx = ToolContext(cwd=ws)
    with pytest.raises(ToolError, match="outside the workspace"):
        read_file({"path": "../ws-evil/f.txt"}, ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        write_file({"path": "../ws-evil/new.txt", "content": "x"}, ctx)
    assert not (ws.parent / "ws-evil" / "new.txt").exists()
    assert read_file({"path": "f.txt"}, ctx).endswith("in ws")


def test_allowed_paths_and_saved_results_are_roots_only_for_themselves(ws: Path, tmp_path: Path) -> None:
    home = HermesHome(tmp_path / "hh", "default")
    evil_results = Path(str(home.results_dir) + "-evil")
    evil_results.mkdir(parents=True)
    ctx = ToolContext(cwd=ws, config=Config({"tools": {"allowed_paths": [str(tmp_path / "shared")]}}), home=home)
    check_path(ctx, tmp_path / "shared" / "f.txt", "f", write=True)
    check_path(ctx, home.results_dir / "call.txt", "r", write=False)
    for path in (tmp_path / "shared-evil" / "f.txt", evil_results / "call.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            check_path(ctx, path, str(path), write=False)


def test_a_server_confines_paths_and_the_terminal_workdir_to_its_workspace(ws: Path) -> None:
    ctx = ToolContext(cwd=ws, services={"workspace": ws, "unattended": True})
    assert resolve_path(ctx, "f.txt") == ws / "f.txt"
    for raw in ("../ws-evil/f.txt", str(ws) + "-evil", "../wsx"):
        with pytest.raises(ToolError, match="outside the workspace"):
            resolve_path(ctx, raw)
    with pytest.raises(ToolError, match="outside the workspace"):
        terminal({"command": "pwd", "workdir": "../ws-evil"}, ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        search_files({"pattern": "in", "path": "../ws-evil"}, ctx)
    assert terminal({"command": "pwd"}, ctx) == f"exit code: 0\n{ws}\n"


@pytest.mark.parametrize("command", [
    "echo x > ../ws-evil/f.txt",
    "rm -rf ../ws-evil",
    "cp f.txt ../wsx/",
    "touch {ws}-evil/new",
    "cd ../ws-evil && make",
    "sed -i s/in/out/ ../ws-evil/f.txt",
    "bash ../ws-evil/run.sh",
])  # fmt: skip
def test_the_command_rule_treats_a_sibling_as_outside(ws: Path, command: str) -> None:
    reason = approval_reason(command.format(ws=ws), ws)
    assert reason is not None and "outside the workspace" in reason, reason
    inside = command.replace("../ws-evil", "sub").replace("../wsx", "sub").replace("{ws}-evil", "{ws}/sub")
    assert approval_reason(inside.format(ws=ws), ws) is None, inside
