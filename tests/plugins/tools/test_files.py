"""read_file, write_file and patch on real files in a temporary working directory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.kernel import ToolContext, ToolError
from hermes.plugins.tools.files import READ_MAX_CHARS, patch, read_file, write_file


def _lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


# --- read_file -------------------------------------------------------------------


def test_read_numbers_lines_relative_to_cwd(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text("alpha\nbeta\n")
    assert read_file({"path": "a.txt"}, ctx) == "     1|alpha\n     2|beta"


def test_read_offset_limit_and_next_offset_note(work: Path, ctx: ToolContext) -> None:
    (work / "big.txt").write_text(_lines(30))
    out = read_file({"path": "big.txt", "offset": 11, "limit": 5}, ctx)
    body, note = out.rsplit("\n", 1)
    assert body.splitlines() == [f"{i:>6}|line {i}" for i in range(11, 16)]
    assert note == "[showing lines 11-15 of 30; 15 more: continue with offset=16]"
    # The last page has no note.
    assert read_file({"path": "big.txt", "offset": 26, "limit": 5}, ctx).splitlines()[-1] == "    30|line 30"


def test_read_accepts_numeric_strings_and_absolute_and_home_paths(
    work: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "a.txt").write_text("x\ny\n")
    assert read_file({"path": str(work / "a.txt"), "offset": "2"}, ctx) == "     2|y"
    monkeypatch.setenv("HOME", str(work))
    assert read_file({"path": "~/a.txt", "limit": 1}, ctx).startswith("     1|x")


def test_read_caps_its_own_output(work: Path, ctx: ToolContext) -> None:
    (work / "wide.txt").write_text(("x" * 900 + "\n") * 2000)
    out = read_file({"path": "wide.txt", "limit": 2000}, ctx)
    assert len(out) <= READ_MAX_CHARS + 200
    shown = out.splitlines()[-2].split("|")[0].strip()
    assert f"continue with offset={int(shown) + 1}]" in out and "output capped" in out


def test_read_truncates_very_long_lines(work: Path, ctx: ToolContext) -> None:
    (work / "min.js").write_text("y" * 10_000)
    out = read_file({"path": "min.js"}, ctx)
    assert "[line truncated, 8,000 more characters]" in out and len(out) < 2200


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (lambda w: (w / "d").mkdir(), {"path": "d"}, "is a directory"),
        (lambda w: (w / "b.bin").write_bytes(b"\x89PNG\x00\x01"), {"path": "b.bin"}, "binary file"),
        (lambda w: (w / "notes.txt").write_text("x"), {"path": "note.txt"}, "Similar names in that folder: notes.txt"),
        (lambda w: (w / "s.txt").write_text("a\nb\n"), {"path": "s.txt", "offset": 9}, "past the end of s.txt, which has 2 lines"),
        (lambda w: None, {"path": "x", "offset": 0}, "must be at least 1"),
        (lambda w: None, {}, "missing required argument 'path'"),
        (lambda w: None, {"path": 3}, "must be a string"),
    ],
)
def test_read_errors_say_what_to_do(work: Path, ctx: ToolContext, setup, args, message: str) -> None:
    setup(work)
    with pytest.raises(ToolError, match=message):
        read_file(args, ctx)


def test_read_empty_file(work: Path, ctx: ToolContext) -> None:
    (work / "e.txt").write_text("")
    assert read_file({"path": "e.txt"}, ctx) == "(e.txt is empty)"


# --- write_file ------------------------------------------------------------------


def test_write_creates_parents_and_reports(work: Path, ctx: ToolContext) -> None:
    out = write_file({"path": "pkg/sub/mod.py", "content": "a = 1\nb = 2\n"}, ctx)
    assert (work / "pkg/sub/mod.py").read_text() == "a = 1\nb = 2\n"
    assert out == "created pkg/sub/mod.py: wrote 12 bytes (2 lines)."
    assert write_file({"path": "pkg/sub/mod.py", "content": "é"}, ctx) == "overwrote pkg/sub/mod.py: wrote 2 bytes (1 lines)."
    assert not [p for p in (work / "pkg/sub").iterdir() if p.name.endswith(".tmp")]


def test_write_keeps_mode_and_follows_symlinks(work: Path, ctx: ToolContext) -> None:
    script = work / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    (work / "link.sh").symlink_to(script)
    write_file({"path": "link.sh", "content": "#!/bin/sh\n"}, ctx)
    assert (work / "link.sh").is_symlink()
    assert script.read_text() == "#!/bin/sh\n"
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o755


def test_write_refuses_a_directory_and_a_file_parent(work: Path, ctx: ToolContext) -> None:
    (work / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        write_file({"path": "d", "content": "x"}, ctx)
    (work / "f").write_text("x")
    with pytest.raises(ToolError, match="a parent of this path is a file"):
        write_file({"path": "f/inner.txt", "content": "x"}, ctx)


# --- patch -----------------------------------------------------------------------


def test_patch_replaces_unique_and_shows_region(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    out = patch({"path": "m.py", "old_string": "return 2", "new_string": "return 3"}, ctx)
    assert (work / "m.py").read_text().endswith("    return 3\n")
    assert "replaced 1 occurrence (first at line 5)" in out and "     5|    return 3" in out


def test_patch_ambiguous_names_count_and_lines(work: Path, ctx: ToolContext) -> None:
    (work / "x.py").write_text("a = 0\nb = 0\nc = 0\n")
    with pytest.raises(ToolError, match=r"occurs 3 times in x.py \(lines 1, 2, 3\); include more"):
        patch({"path": "x.py", "old_string": " = 0", "new_string": " = 1"}, ctx)
    assert (work / "x.py").read_text() == "a = 0\nb = 0\nc = 0\n"
    out = patch({"path": "x.py", "old_string": " = 0", "new_string": " = 1", "replace_all": True}, ctx)
    assert (work / "x.py").read_text() == "a = 1\nb = 1\nc = 1\n" and "replaced 3 occurrences" in out


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("nowhere", "x", "not found in t.py. Use read_file"),
        ("if x:\n  y()", "z", r"differs only in whitespace or indentation starts at line\(s\) 2"),
        ("same", "same", "identical"),
        ("", "x", "old_string is empty; to create or rewrite a whole file use write_file"),
    ],
)
def test_patch_errors(work: Path, ctx: ToolContext, old: str, new: str, message: str) -> None:
    (work / "t.py").write_text("def f():\n    if x:\n        y()\n")
    with pytest.raises(ToolError, match=message):
        patch({"path": "t.py", "old_string": old, "new_string": new}, ctx)


def test_patch_keeps_crlf_and_undecodable_bytes(work: Path, ctx: ToolContext) -> None:
    (work / "w.txt").write_bytes(b"one\r\ntwo\r\n\xff\xfe three\r\n")
    patch({"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}, ctx)
    assert (work / "w.txt").read_bytes() == b"1\r\n2\r\n\xff\xfe three\r\n"


def test_patch_refuses_binary_and_missing(work: Path, ctx: ToolContext) -> None:
    (work / "b").write_bytes(b"a\x00b")
    with pytest.raises(ToolError, match="binary"):
        patch({"path": "b", "old_string": "a", "new_string": "c"}, ctx)
    with pytest.raises(ToolError, match="no such file"):
        patch({"path": "nope.py", "old_string": "a", "new_string": "c"}, ctx)


_text = st.text(alphabet="ab\n", max_size=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=_text, old=st.text(alphabet="ab\n", min_size=1, max_size=4), new=st.text(alphabet="cd", max_size=4), after=_text)
def test_patch_replaces_exactly_one_occurrence(tmp_path: Path, before: str, old: str, new: str, after: str) -> None:
    """Whatever the text, a successful patch replaces the one occurrence and nothing else."""
    text = before + old + after
    path = tmp_path / "h.txt"
    path.write_bytes(text.encode())
    ctx = ToolContext(cwd=tmp_path)
    occurrences = sum(text.startswith(old, i) for i in range(len(text)))  # overlapping ones too
    if occurrences == 1:
        patch({"path": "h.txt", "old_string": old, "new_string": new}, ctx)
        assert path.read_bytes().decode() == before + new + after
    else:
        with pytest.raises(ToolError, match=f"occurs {occurrences} times"):
            patch({"path": "h.txt", "old_string": old, "new_string": new}, ctx)
        assert path.read_bytes().decode() == text
