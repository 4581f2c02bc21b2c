"""The path policy of the file tools and the approval switch, at the level of a ToolContext."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes.kernel import Config, HermesHome, ToolContext, ToolError
from hermes.kernel.approvals import approval_callback, approve_everything, approvals_off
from hermes.kernel.errors import ConfigError
from hermes.kernel.paths_policy import check_path, denied_reason, workspace_roots
from hermes.plugins.tools._search import walk_files


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def ctx_for(work: Path, *, approve=None, config: dict | None = None, home: HermesHome | None = None) -> ToolContext:
    return ToolContext(cwd=work, approve=approve, config=Config(config or {}), home=home)


def test_inside_the_workspace_is_free(work: Path, user_home: Path) -> None:
    ctx = ctx_for(work)
    check_path(ctx, work / "a" / "b.txt", "a/b.txt", write=True)
    check_path(ctx, work, ".", write=False)


@pytest.mark.parametrize("write", [False, True])
def test_outside_is_refused_without_a_way_to_ask(work: Path, tmp_path: Path, user_home: Path, write: bool) -> None:
    with pytest.raises(ToolError, match="outside the workspace.*cannot be asked.*tools.allowed_paths"):
        check_path(ctx_for(work), tmp_path / "other.txt", "../other.txt", write=write)


def test_dot_dot_and_symlinks_are_resolved_before_the_check(work: Path, tmp_path: Path, user_home: Path) -> None:
    (work / "up").symlink_to(tmp_path)
    with pytest.raises(ToolError, match="outside the workspace"):
        check_path(ctx_for(work), work / "up" / "x.txt", "up/x.txt", write=True)
    with pytest.raises(ToolError, match="outside the workspace"):
        check_path(ctx_for(work), work / "sub" / ".." / ".." / "x.txt", "sub/../../x.txt", write=False)
    (work / "key").symlink_to(user_home / ".ssh" / "id_ed25519")
    with pytest.raises(ToolError, match="access denied"):
        check_path(ctx_for(work, approve=approve_everything), work / "key", "key", write=False)


def test_approval_is_asked_once_per_path_and_a_no_is_final(work: Path, tmp_path: Path, user_home: Path) -> None:
    asked: list[tuple[str, str]] = []
    answers = iter([True, False])
    ctx = ctx_for(work, approve=lambda subject, reason: asked.append((subject, reason)) or next(answers))
    target = tmp_path / "notes.txt"
    check_path(ctx, target, str(target), write=False)
    check_path(ctx, target, str(target), write=False)  # remembered
    assert asked == [(f"read {target}", f"read outside the workspace ({work})")]
    with pytest.raises(ToolError, match="declined"):
        check_path(ctx, target, str(target), write=True)  # a write is a new question


@pytest.mark.parametrize(
    ("relative", "write"),
    [(".ssh/id_ed25519", False), (".ssh/authorized_keys", True), (".ssh/config", False), (".netrc", False),
     (".pgpass", False), (".git-credentials", False), (".aws/credentials", False), (".kube/config", False),
     (".docker/config.json", False), (".config/gcloud/application_default_credentials.json", False),
     (".gnupg/private-keys-v1.d/x.key", False)],
)
def test_deny_list_holds_even_with_everything_approved(work: Path, user_home: Path, relative: str, write: bool) -> None:
    with pytest.raises(ToolError, match="access denied.*never open"):
        check_path(ctx_for(work, approve=approve_everything), user_home / relative, f"~/{relative}", write=write)


def test_system_files_and_hermes_secrets_are_denied(work: Path, tmp_path: Path, user_home: Path) -> None:
    root = tmp_path / "hermes"
    home = HermesHome(root, "default")
    assert denied_reason(Path("/etc/shadow"), write=False) and denied_reason(Path("/etc/sudoers.d/x"), write=False)
    assert denied_reason(Path("/etc/passwd"), write=True) and denied_reason(Path("/etc/passwd"), write=False) is None
    for path in (root / ".env", root / "auth.json", root / "profiles" / "work" / ".env"):
        with pytest.raises(ToolError, match="HERMES_HOME"):
            check_path(ctx_for(work, approve=approve_everything, home=home), path, str(path), write=False)
    # the project's own .env is the user's business: readable (and redacted on the way out)
    check_path(ctx_for(work, home=home), work / ".env", ".env", write=False)


def test_allowed_paths_and_saved_results_are_roots(work: Path, tmp_path: Path, user_home: Path) -> None:
    shared = tmp_path / "shared"
    home = HermesHome(tmp_path / "hermes", "default")
    ctx = ctx_for(work, config={"tools": {"allowed_paths": [str(shared), "~/notes"]}}, home=home)
    assert workspace_roots(ctx)[1:] == [Path(os.path.realpath(shared)), Path(os.path.realpath(user_home / "notes"))]
    check_path(ctx, shared / "x.txt", "x", write=True)
    check_path(ctx, user_home / "notes" / "n.md", "n", write=False)
    check_path(ctx, home.results_dir / "call_1.txt", "r", write=False)  # the kernel told the model to read it
    with pytest.raises(ToolError, match="outside the workspace"):
        check_path(ctx, home.results_dir / "call_1.txt", "r", write=True)


def test_search_never_walks_into_denied_files(work: Path, user_home: Path) -> None:
    (work / "a.txt").write_text("x\n")
    (work / "k").symlink_to(user_home / ".ssh" / "id_ed25519")
    assert [p.name for p in walk_files(work)] == ["a.txt"]
    assert list(walk_files(user_home)) == []


def test_approval_switch() -> None:
    prompt = lambda subject, reason: False  # noqa: E731
    assert approval_callback(Config({}), prompt) is prompt
    assert approval_callback(Config({}), None) is None
    assert approval_callback(Config({}), None, yolo=True) is approve_everything
    assert approval_callback(Config({"approvals": {"mode": "off"}}), prompt) is approve_everything
    assert approvals_off(Config({"approvals": {"mode": False}}))  # YAML's bare `off`
    with pytest.raises(ConfigError, match="approvals.mode must be one of ask, off"):
        approvals_off(Config({"approvals": {"mode": "maybe"}}))


def test_security_doc_names_every_denied_path_and_setting() -> None:
    from hermes.kernel.paths_policy import DENIED_HOME_DIRS, DENIED_HOME_FILES

    text = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text(encoding="utf-8")
    for name in DENIED_HOME_DIRS + DENIED_HOME_FILES:
        assert f"~/{name.split('/')[0]}" in text, name
    for phrase in ("security.redact_tool_output", "tools.allowed_paths", "approvals.mode", "--yolo", "not a sandbox"):
        assert phrase in text, phrase


def test_redaction_markers_are_never_written_back(work: Path, user_home: Path) -> None:
    from hermes.plugins.tools.files import patch, write_file

    env = work / ".env"
    env.write_text("OPENAI_API_KEY=sk-real-value\nDEBUG=0\n")
    ctx = ctx_for(work)
    with pytest.raises(ToolError, match=r"\[REDACTED:openai-key\].*replace the real value"):
        write_file({"path": ".env", "content": "OPENAI_API_KEY=[REDACTED:openai-key]\nDEBUG=1\n"}, ctx)
    with pytest.raises(ToolError, match="redaction marker"):
        patch({"path": ".env", "old_string": "DEBUG=0", "new_string": "DEBUG=1\nX=[REDACTED:secret]"}, ctx)
    assert env.read_text() == "OPENAI_API_KEY=sk-real-value\nDEBUG=0\n"
    patch({"path": ".env", "old_string": "DEBUG=0", "new_string": "DEBUG=1"}, ctx)  # editing around it works
    doc = work / "doc.md"
    doc.write_text("Keys show as [REDACTED:openai-key].\n")
    write_file({"path": "doc.md", "content": "Keys show as [REDACTED:openai-key] in tool output.\n"}, ctx)
