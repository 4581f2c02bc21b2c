"""Approvals on a server, end to end: ``hermes serve`` in a subprocess, the fake model asking for the commands and reads.

Each test asserts on what ran (marker files that must not exist) and on the tool results the
model got back (the next request the fake model server received).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.serve_process import ServeProcess, serve_env

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

CANARY = "canary-51e0d2"
SECRET_HEX = "51e0d2" * 12  # serve_secret must be hex to be a secret the server accepts
ALLOWED = ["git status*", "git push origin *", "ls *"]
OK = {"git status*": "git status", "git push origin *": "git push origin main", "ls *": "ls -la"}
# Shapes that smuggle a second command past an allowed first one; {ok} is allowed, {m} must never appear.
SHAPES = {
    "compound": "{ok}; echo touch {m} | sh",
    "and-list": "{ok} && echo touch {m} | sh",
    "piped": "{ok} | tee ~/.bashrc",
    "$()": "{ok} $(echo touch {m} | sh)",
    "backticks": "{ok} `echo touch {m} | sh`",
    "<()": "{ok} <(echo touch {m} | sh)",
    "redirected": "{ok} > ~/.bashrc",
    "subshell": "({ok}; echo touch {m} | sh)",
    "sh -c": "sh -c '{ok}; echo touch {m} | sh'",
    "eval": "eval '{ok}; echo touch {m} | sh'",
    "variable as the program": "${{CMD:-touch}} {m}",
}


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    folder = tmp_path / "user-home"
    folder.mkdir()
    return folder


def _start(server: FakeModelServer, home: Path, user_home: Path, **settings) -> ServeProcess:
    env = serve_env(server, home, **settings)
    env["HOME"] = str(user_home)  # ~/.bashrc of the commands lands here
    return ServeProcess(env)


def _tool_results(server: FakeModelServer) -> list[str]:
    """The tool messages of the last request the model got: what the server told it."""
    return [m["content"] for m in server.requests[-1].messages if m.get("role") == "tool"]


def test_no_shape_of_command_gets_past_the_allow_list(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, user_home: Path
) -> None:
    workspace = tmp_path / "workspace"
    calls, markers = [], []
    for pattern, ok in OK.items():
        for number, shape in enumerate(SHAPES.values()):
            marker = workspace / f"ran-{len(markers)}"
            markers.append(marker)
            calls.append(("terminal", {"command": shape.format(ok=ok, m=marker)}))
    calls.append(("terminal", {"command": "git push origin main --force"}))  # dangerous, and allowed: it runs
    fake_model_server.tool_calls(*calls)
    fake_model_server.reply("done")
    server = _start(fake_model_server, hermes_home, user_home, workspace=str(workspace), toolsets='["terminal"]',
                    approvals="allow-list", allowed_commands=json.dumps(ALLOWED))  # fmt: skip
    with server:
        server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}])
        results = _tool_results(fake_model_server)
    assert len(results) == len(calls)
    assert not [m for m in markers if m.exists()] and not (user_home / ".bashrc").exists()
    for (_, args), result in zip(calls[:-1], results[:-1]):
        assert result.startswith("error: command blocked"), (args, result)
        assert "serve.allowed_commands" in result and "`" in result, (args, result)
    assert results[-1].startswith("exit code:"), results[-1]  # approved by `git push origin *`, so it ran


def test_the_terminal_is_not_on_a_server_unless_serve_toolsets_names_it(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, user_home: Path
) -> None:
    marker = tmp_path / "workspace" / "ran"
    fake_model_server.tool_calls(("terminal", {"command": f"touch {marker}"}))
    fake_model_server.reply("done")
    server = _start(fake_model_server, hermes_home, user_home, workspace=str(tmp_path / "workspace"))
    with server:
        server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}])
        offered = [t["function"]["name"] for t in fake_model_server.requests[0].body.get("tools", [])]
        results = _tool_results(fake_model_server)
        assert "read_file" in offered and "terminal" not in offered
        assert "unknown tool 'terminal'" in results[0] and not marker.exists()
        line = next(line for line in server.stderr.splitlines() if "toolsets on:" in line)
        assert "files" in line and "terminal off (enable with serve.toolsets)" in line
        assert "terminal," not in line.split("toolsets on:")[1].split(";")[0] + ","


def _plant_secrets(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".env").write_text(f"LEAK_CHECK={CANARY}\n")
    (home / "config.yaml").write_text(f"# {CANARY}\n")
    (home / "auth.json").write_text(json.dumps({"note": CANARY}))
    (home / "serve_secret").write_text(SECRET_HEX)


@pytest.mark.parametrize("confined", [True, False], ids=["workspace-in-home", "workspace-is-home"])
def test_the_files_tool_never_reads_hermes_home_secrets(
    fake_model_server: FakeModelServer, hermes_home: Path, user_home: Path, confined: bool
) -> None:
    _plant_secrets(hermes_home)
    # workspace-is-home: the server's workspace is HERMES_HOME itself, so only the deny list stands guard.
    workspace = hermes_home / "workspace" if confined else hermes_home
    workspace.mkdir(exist_ok=True)
    (workspace / "link-env").symlink_to(hermes_home / ".env")
    os.link(hermes_home / ".env", workspace / "hard-env")
    paths = []
    for name in (".env", "config.yaml", "auth.json", "serve_secret"):
        paths += [f"../{name}" if confined else name, str(hermes_home / name), f"/proc/self/root{hermes_home / name}"]
    paths += ["link-env", "hard-env", "../.ENV" if confined else ".ENV"]
    fake_model_server.tool_calls(*[("read_file", {"path": p}) for p in paths],
                                 ("search_files", {"pattern": "canary", "path": "."}))  # fmt: skip
    fake_model_server.reply("done")
    server = _start(fake_model_server, hermes_home, user_home, workspace=str(workspace))
    with server:
        server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}])
        results = _tool_results(fake_model_server)
    assert len(results) == len(paths) + 1
    assert not [r for r in results if CANARY in r or SECRET_HEX in r]
    for path, result in zip(paths, results):
        assert "access denied" in result or "outside the workspace" in result, (path, result)
    if not confined:
        assert all("access denied" in r for r in results[: len(paths)])


def test_the_terminal_on_a_server_never_reads_hermes_home_secrets(
    fake_model_server: FakeModelServer, hermes_home: Path, user_home: Path
) -> None:
    _plant_secrets(hermes_home)
    commands = ["cat ../.env", "cat ../config.yaml", "cd .. && cat auth.json", "cat ../serve_secret",
                "cat ../.e*", "grep -r canary ..", f"cat /proc/self/root{hermes_home}/.env"]  # fmt: skip
    fake_model_server.tool_calls(*[("terminal", {"command": c}) for c in commands])
    fake_model_server.reply("done")
    server = _start(fake_model_server, hermes_home, user_home, toolsets='["terminal"]')
    with server:
        server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}])
        results = _tool_results(fake_model_server)
    assert len(results) == len(commands) and not [r for r in results if CANARY in r or SECRET_HEX in r]
    assert all(r.startswith("error: command blocked") for r in results), results
