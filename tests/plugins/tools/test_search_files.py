"""search_files over a real tree: content and name search, skipped folders, limits, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes.kernel import ToolContext, ToolError
from hermes.plugins.tools.files import search_files


@pytest.fixture
def tree(work: Path) -> Path:
    files = {
        "src/app.py": "import os\ndef main():\n    return os.getcwd()\n",
        "src/util.py": "def helper():\n    pass\n",
        "docs/guide.md": "Call main() first.\n",
        ".git/config": "def main(): hidden\n",
        ".venv/lib/site.py": "def main(): hidden\n",
        "env2/pyvenv.cfg": "home = /usr\n",
        "env2/lib/x.py": "def main(): hidden\n",
        "node_modules/pkg/index.js": "function main() {}\n",
        "src/__pycache__/app.cpython.pyc": "def main(): hidden\n",
    }
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    (work / "src/blob.bin").write_bytes(b"def main()\x00\x01")
    return work


def test_content_search_reports_file_line_text(tree: Path, ctx: ToolContext) -> None:
    out = search_files({"pattern": r"main\("}, ctx)
    assert out.splitlines() == [
        "docs/guide.md:1: Call main() first.",
        "src/app.py:2: def main():",
    ]


def test_file_glob_and_ignore_case(tree: Path, ctx: ToolContext) -> None:
    assert search_files({"pattern": "MAIN", "file_glob": "*.py", "ignore_case": True}, ctx) == "src/app.py:2: def main():"
    assert search_files({"pattern": "def", "file_glob": "src/u*.py"}, ctx) == "src/util.py:1: def helper():"


def test_name_search_by_glob_and_substring(tree: Path, ctx: ToolContext) -> None:
    assert search_files({"pattern": "*.py", "target": "files"}, ctx).splitlines() == ["src/app.py", "src/util.py"]
    assert search_files({"pattern": "GUIDE", "target": "files"}, ctx) == "docs/guide.md"
    assert search_files({"pattern": "nothing-like-it", "target": "files"}, ctx).startswith("no file names match")


def test_path_argument_scopes_the_search(tree: Path, ctx: ToolContext) -> None:
    assert search_files({"pattern": "main", "path": "docs"}, ctx) == "docs/guide.md:1: Call main() first."
    assert search_files({"pattern": "def", "path": "src/util.py"}, ctx) == "src/util.py:1: def helper():"
    # An explicitly named skipped folder is still searched.
    assert "site.py:1" in search_files({"pattern": "hidden", "path": ".venv"}, ctx)


def test_limit_adds_a_more_results_note(work: Path, ctx: ToolContext) -> None:
    (work / "many.txt").write_text("hit\n" * 20)
    lines = search_files({"pattern": "hit", "limit": 5}, ctx).splitlines()
    assert lines[:5] == [f"many.txt:{i}: hit" for i in range(1, 6)]
    assert lines[5].startswith("[more matches exist beyond the first 5")
    assert "[more" not in search_files({"pattern": "hit", "limit": 20}, ctx)


def test_no_match_says_how_much_was_searched(tree: Path, ctx: ToolContext) -> None:
    assert search_files({"pattern": "zebra"}, ctx) == "no matches for 'zebra' in . (3 text files searched)"


def test_long_match_lines_are_cut(work: Path, ctx: ToolContext) -> None:
    (work / "wide.txt").write_text("needle" + "x" * 5000 + "\n")
    out = search_files({"pattern": "needle"}, ctx)
    assert out.endswith(" …") and len(out) < 300


def test_outside_cwd_paths_are_absolute(tmp_path: Path, ctx: ToolContext) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.txt").write_text("needle\n")
    ctx.approve = lambda subject, reason: True  # outside the workspace: the user said yes
    assert search_files({"pattern": "needle", "path": str(other)}, ctx) == f"{other / 'o.txt'}:1: needle"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"pattern": "main("}, "invalid regular expression 'main(': missing ), unterminated subpattern"),
        ({"pattern": "x", "path": "missing"}, "missing: no such file or folder"),
        ({"pattern": "x", "target": "dirs"}, "target must be 'content' or 'files'"),
        ({"pattern": ""}, "must not be empty"),
    ],
)
def test_errors(tree: Path, ctx: ToolContext, args: dict, message: str) -> None:
    with pytest.raises(ToolError, match=re.escape(message)):
        search_files(args, ctx)


def test_interrupt_stops_the_walk(tree: Path, work: Path) -> None:
    ctx = ToolContext(cwd=work, is_interrupted=lambda: True)
    assert search_files({"pattern": "main"}, ctx).endswith("[search stopped early: interrupted]")
