"""Tools on a server: HERMES_HOME's secrets denied to every reader, the allow-list in the terminal, the server's toolsets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes.kernel import Config, HermesHome, ToolContext, ToolError
from hermes.kernel.approvals import UNATTENDED_SERVICE, CommandAllowList, approve_everything
from hermes.plugins.tools.files import read_file, search_files
from hermes.plugins.tools.skills import skill_view
from hermes.plugins.tools.terminal import terminal

CANARY = "canary-7f3a9c"
SECRETS = (".env", "config.yaml", "auth.json", "serve_secret", "signing.key", "tls.pem")


@pytest.fixture
def hh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HERMES_HOME whose every secret file holds the canary, plus a profile's and a workspace."""
    root = tmp_path / "hermes-home"
    (root / "workspace").mkdir(parents=True)
    (root / "profiles" / "work").mkdir(parents=True)
    for name in SECRETS:
        (root / name).write_text(f"SECRET={CANARY}\n")
    (root / "profiles" / "work" / ".env").write_text(f"SECRET={CANARY}\n")
    (root / "workspace" / "notes.txt").write_text("hello\n")
    monkeypatch.setenv("HERMES_HOME", str(root))
    monkeypatch.setattr("hermes.kernel.paths_policy._secret_inodes_cache", {})
    return root


def _ctx(hh: Path, cwd: Path, **fields) -> ToolContext:
    return ToolContext(session_id="s", cwd=cwd, home=HermesHome(hh, "default"), config=Config({}), **fields)


def _reads(hh: Path) -> list[str]:
    """Ways to name each secret from the workspace: ../, absolute, /proc/self/root, case, a detour."""
    ways = []
    for name in SECRETS:
        ways += [f"../{name}", str(hh / name), f"/proc/self/root{hh / name}", f"sub/../../{name}", f"..//{name}"]
    ways += [f"../{'.ENV'}", "../Config.YAML", "../profiles/work/.env", f"/proc/self/root{hh}/profiles/work/.env"]
    return ways


@pytest.mark.parametrize("yolo", [False, True])
def test_read_file_never_reads_a_hermes_home_secret(hh: Path, yolo: bool) -> None:
    # The workspace is HERMES_HOME's parent's child; cwd at HERMES_HOME itself too, so the deny list is the only guard.
    for cwd in (hh / "workspace", hh):
        ctx = _ctx(hh, cwd, approve=approve_everything if yolo else None)
        for raw in _reads(hh) if cwd != hh else [w for w in _reads(hh) if w.startswith("/")]:
            with pytest.raises(ToolError, match="access denied|outside the workspace") as error:
                read_file({"path": raw}, ctx)
            assert CANARY not in str(error.value)
    ctx = _ctx(hh, hh, approve=approve_everything)
    for raw in (".env", "config.yaml", "auth.json", "serve_secret"):
        with pytest.raises(ToolError, match="access denied"):
            read_file({"path": raw}, ctx)


def test_links_to_a_secret_are_denied_under_any_name(hh: Path) -> None:
    work = hh / "workspace"
    for index, name in enumerate(SECRETS):
        (work / f"sym{index}.txt").symlink_to(hh / name)
        os.link(hh / name, work / f"hard{index}.txt")
    (work / "dir").symlink_to(hh)
    ctx = _ctx(hh, work, approve=approve_everything)
    for index in range(len(SECRETS)):
        for raw in (f"sym{index}.txt", f"hard{index}.txt", f"dir/{SECRETS[index]}"):
            with pytest.raises(ToolError, match="access denied"):
                read_file({"path": raw}, ctx)
    with open(hh / ".env") as fh:  # an open descriptor of the secret, reached through /proc
        with pytest.raises(ToolError, match="access denied"):
            read_file({"path": f"/proc/self/fd/{fh.fileno()}"}, ctx)
    assert read_file({"path": "notes.txt"}, ctx).endswith("hello")


def test_search_files_never_shows_a_secret(hh: Path) -> None:
    (hh / "workspace" / "link.txt").symlink_to(hh / ".env")
    ctx = _ctx(hh, hh, approve=approve_everything)
    for root in (".", "workspace"):
        out = search_files({"pattern": "SECRET", "path": root}, ctx)
        assert CANARY not in out


@pytest.mark.parametrize("command", [
    "cat ../.env",
    "cat ../.e*",
    "cat ../config.yaml",
    "cat ../auth.json",
    "cat ../serve_secret",
    "cat ../signing.key",
    "cd .. && cat .env",
    "cat < ../config.yaml",
    "head -c 200 ../.ENV",
    "python3 -c \"print(open('../auth.json').read())\"",
    "cat /proc/self/root{hh}/.env",
    "cat {hh}/profiles/work/.env",
    "cat \"../.e\"nv",
    "base64 --input=../.env",
])  # fmt: skip
def test_the_terminal_refuses_commands_that_name_a_secret(hh: Path, command: str) -> None:
    marker = hh / "workspace" / "ran"
    ctx = _ctx(hh, hh / "workspace", approve=approve_everything)
    with pytest.raises(ToolError, match="command blocked: .*never open to the agent") as error:
        terminal({"command": command.format(hh=hh) + f"; touch {marker}"}, ctx)
    assert CANARY not in str(error.value) and not marker.exists()


@pytest.mark.parametrize("command", ["grep -r SECRET ..", "rg SECRET ..", "tar cf - .. ", "cp -r .. /tmp/x", "find .. -exec cat {} +"])
def test_on_a_server_a_command_that_reads_hermes_home_whole_is_refused(hh: Path, command: str) -> None:
    ctx = _ctx(hh, hh / "workspace", services={UNATTENDED_SERVICE: True})
    with pytest.raises(ToolError, match="reads HERMES_HOME"):
        terminal({"command": command}, ctx)
    assert "exit code: 0" in terminal({"command": "grep -r hello ."}, ctx)


def test_skill_files_that_link_to_a_secret_are_not_shown(hh: Path) -> None:
    skill = hh / "skills" / "leak"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: leak\ndescription: d\n---\nbody\n")
    os.link(hh / ".env", skill / "references" / "notes.md")
    ctx = _ctx(hh, hh / "workspace")
    with pytest.raises(ToolError, match="access denied"):
        skill_view({"name": "leak", "file": "references/notes.md"}, ctx)


def test_an_agents_md_linked_to_a_secret_stays_out_of_the_prompt(hh: Path) -> None:
    from hermes.kernel.context_files import load_project_context

    (hh / "workspace" / "AGENTS.md").symlink_to(hh / ".env")
    context = load_project_context(hh / "workspace")
    assert CANARY not in (context.text if hasattr(context, "text") else str(context))
    assert any("left out" in w for w in context.warnings)


# --- the allow-list inside the terminal tool -------------------------------------------------------


@pytest.mark.parametrize("command", [
    "git status; echo touch {m} | sh",
    "git status | sh -c 'touch {m}'; echo x | sh",
    "git status $(echo touch {m} | sh)",
    "git status `echo touch {m} | sh`",
    "git status > ~/.bashrc; touch {m}",
    "(git status; echo touch {m} | sh)",
    "sh -c 'git status; echo touch {m} | sh'",
    "eval 'git status; echo touch {m} | sh'",
    "${{CMD:-touch}} {m}",
])  # fmt: skip
def test_the_terminal_runs_nothing_of_a_command_the_allow_list_does_not_cover(
    hh: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(hh / "workspace"))
    marker = hh / "workspace" / "marker"
    ctx = _ctx(hh, hh / "workspace", approve=CommandAllowList(("git status*",)))
    with pytest.raises(ToolError, match=r"command blocked: .*`.+` .*serve\.allowed_commands") as error:
        terminal({"command": command.format(m=marker)}, ctx)
    assert not marker.exists() and not (hh / "workspace" / ".bashrc").exists()
    assert "git status" not in str(error.value).split("`")[1] or "cannot be checked" in str(error.value)


def test_the_terminal_runs_what_the_allow_list_covers(hh: Path) -> None:
    marker = hh / "workspace" / "marker"
    ctx = _ctx(hh, hh / "workspace", approve=CommandAllowList((f"touch {marker}", "sh", "echo *")))
    out = terminal({"command": f"echo touch {marker} | sh"}, ctx)  # dangerous (pipes into sh), every part allowed
    assert out.startswith("exit code: 0") and marker.exists()


def test_refuse_mode_on_a_server_names_the_settings(hh: Path) -> None:
    ctx = _ctx(hh, hh / "workspace", services={UNATTENDED_SERVICE: True})
    with pytest.raises(ToolError, match="serve.approvals is refuse.*serve.allowed_commands"):
        terminal({"command": "echo x | sh"}, ctx)
    with pytest.raises(ToolError, match="cannot be checked.*serve.allowed_commands"):
        terminal({"command": "$CMD x"}, ctx)
    assert terminal({"command": "echo fine"}, ctx) == "exit code: 0\nfine\n"


# --- the toolsets a server offers ----------------------------------------------------------------


def test_a_server_has_every_cli_toolset_but_the_terminal_unless_serve_toolsets_says_so() -> None:
    from hermes.kernel import PluginHost
    from hermes.plugins.serve.profiles import server_toolsets

    host = PluginHost()
    default = server_toolsets(Config({}), host)
    assert "terminal" not in default and {"files", "todo", "memory"} <= set(default)
    assert server_toolsets(Config({"toolsets": ["files", "terminal"]}), host) == ["files"]
    assert server_toolsets(Config({"serve": {"toolsets": ["files", "terminal"]}}), host) == ["files", "terminal"]


def test_on_a_server_a_sub_agent_gets_no_toolset_its_parent_lacks(hh: Path) -> None:
    from types import SimpleNamespace

    from hermes.kernel import Tool
    from hermes.plugins.tools.delegate import delegate_task

    ran: list[object] = []
    files_tool = Tool(name="read_file", description="d", parameters={"type": "object"}, handler=lambda a, c: "", toolset="files")
    delegator = SimpleNamespace(parent=SimpleNamespace(tools=[files_tool]), run=lambda tasks: ran.append(tasks) or ["ok"])
    ctx = _ctx(hh, hh / "workspace", services={UNATTENDED_SERVICE: True, "delegator": delegator})
    with pytest.raises(ToolError, match=r"toolsets this server does not give you \(terminal\)"):
        delegate_task({"goal": "run it", "toolsets": ["files", "terminal"]}, ctx)
    assert not ran
    assert "ok" in delegate_task({"goal": "read it", "toolsets": ["files"]}, ctx) and len(ran) == 1


def test_on_a_server_a_folder_reader_without_a_path_reads_the_working_folder(hh: Path) -> None:
    ctx = _ctx(hh, hh, services={UNATTENDED_SERVICE: True})  # a server whose workspace is HERMES_HOME itself
    for command in ("grep -r SECRET", "rg SECRET", "tar cf /tmp/x.tar ."):
        with pytest.raises(ToolError, match="reads HERMES_HOME"):
            terminal({"command": command}, ctx)


def test_an_inode_freed_by_a_replaced_secret_does_not_deny_the_file_that_reuses_it(tmp_path, monkeypatch) -> None:
    from hermes.kernel import paths_policy

    home = tmp_path / "home"
    home.mkdir()
    (home / "auth.json").write_text("{}")
    work = tmp_path / "work"
    work.mkdir()
    ordinary = work / "calc.py"
    ordinary.write_text("print(5)\n")
    info = ordinary.stat()
    # A stale cache that still lists calc.py's inode as auth.json's (the replaced file's freed inode).
    paths_policy._secret_inodes_cache[str(home.resolve())] = (paths_policy.time.monotonic(), frozenset({(info.st_dev, info.st_ino)}))
    assert paths_policy.denied_reason(ordinary.resolve(), write=False, hermes_home=home) is None
    os_link = work / "hard-auth"
    os_link.hardlink_to(home / "auth.json")
    assert paths_policy.denied_reason(os_link.resolve(), write=False, hermes_home=home) is not None
