"""Hermes Agent's general plugins (``plugin.yaml`` + ``register(ctx)``) through the real CLI.

The bundled plugins come from the real Hermes Agent 0.19.0 release (copied into
the test's HERMES_HOME/plugins at test time, as a user would install them);
``hello-world`` follows the shape of Hermes Agent's documented example and
lives in tests/compat/general_plugins/. Each fault of the fault table is a
plugin folder (or entry point) of its own in one home: one line in ``plugin
list`` and ``doctor``, and the next command still works.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.hermes_agent import LATEST, release_path

HELLO = Path(__file__).resolve().parents[1] / "compat" / "general_plugins" / "hello-world"
#: Bundled general plugins of Hermes Agent 0.19.0 that need no account, service or extra package.
BUNDLED = ("disk-cleanup", "security-guidance")


def _env(server: FakeModelServer, load: str) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "sk-test-key-0123456789abcdef",
        "OPENAI_BASE_URL": server.openai_base_url,
        "HERMES_MODEL__PROVIDER": "openai",
        "HERMES_MODEL__NAME": "test-model",
        "HERMES_MODEL__TIMEOUT": "10",
        "HERMES_LOAD_PLUGINS": load,  # folder plugins obey it by folder name, like distributions
    }


def _runner(env: dict[str, str], cwd: Path):
    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hermes.kernel", *args], capture_output=True, text=True,
                              env={**os.environ, **env}, cwd=cwd, input=input, timeout=120)  # fmt: skip

    return run


def _rows(run) -> dict[str, dict]:
    listed = run("plugin", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {r["name"]: r for r in json.loads(listed.stdout) if r["group"] == "hermes.plugins"}


def test_bundled_plugins_and_hello_world_load_list_and_serve_a_chat(
    tmp_path: Path, hermes_home: Path, fake_model_server: FakeModelServer
) -> None:
    plugins = hermes_home / "plugins"
    for name in BUNDLED:
        shutil.copytree(release_path(LATEST) / "plugins" / name, plugins / name)
    run = _runner(_env(fake_model_server, ",".join((*BUNDLED, "hello-world"))), tmp_path)
    installed = run("plugin", "install", str(HELLO))
    assert installed.returncode == 0, installed.stderr
    assert f"installed Hermes Agent plugin hello-world 1.0.0 into {plugins / 'hello-world'}" in installed.stdout

    rows = _rows(run)
    assert {n: (r["kind"], r["enabled"], r["error"]) for n, r in rows.items()} == {
        "disk-cleanup": ("folder", True, None),
        "security-guidance": ("folder", True, None),
        "hello-world": ("folder", True, None),
    }
    assert (rows["disk-cleanup"]["version"], rows["hello-world"]["version"]) == ("2.0.0", "1.0.0")
    table = run("plugin", "list")
    assert "source" in table.stdout and "folder" in table.stdout
    doctor = json.loads(run("doctor", "--json").stdout)
    assert not [p for p in doctor["plugins"] if p["group"] == "hermes.plugins" and p["error"]]

    # The plugin's tool is offered to the model, called, and its answer reaches the model.
    fake_model_server.tool_calls(("hello_world", {"name": "Ada"}))
    fake_model_server.reply("It said hello.")
    chat = run("chat", "-q", "Greet Ada with the plugin")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip() == "It said hello."
    offered = {t["function"]["name"] for t in fake_model_server.requests[0].body["tools"]}
    assert {"hello_world", "read_file"} <= offered
    (result,) = [m for m in fake_model_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert json.loads(result["content"]) == {"greeting": "Hello, Ada!"}

    # Its register_cli_command is `hermes hello`, parsed by the plugin's own argparse setup.
    hello = run("hello", "Grace")
    assert (hello.returncode, hello.stdout.strip()) == (0, "Hello, Grace! (from hermes hello)")

    # Its register_command is a slash command in the REPL; a built-in name stays the built-in's.
    repl = run("chat", "--repl", input="/help\n/hello Ada Lovelace\n/exit\n")
    assert repl.returncode == 0, repl.stderr
    assert "Hello from a slash command, Ada Lovelace!" in repl.stderr and "/hello" in repl.stderr

    # disable / enable / remove work on folder plugins.
    assert run("plugin", "disable", "hello-world").returncode == 0
    assert _rows(run)["hello-world"]["enabled"] is False
    fake_model_server.reply("No tool now.")
    assert run("chat", "-q", "hi").returncode == 0
    assert "hello_world" not in {t["function"]["name"] for t in fake_model_server.requests[-1].body["tools"]}
    assert run("plugin", "enable", "hello-world").returncode == 0
    assert _rows(run)["hello-world"]["enabled"] is True
    refused = run("plugin", "remove", "hello-world")  # no terminal to confirm on: --yes is needed
    assert refused.returncode != 0 and "--yes" in refused.stderr and (plugins / "hello-world").is_dir()
    removed = run("plugin", "remove", "hello-world", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert not (plugins / "hello-world").exists() and "hello-world" not in _rows(run)


def _write(folder: Path, init: str, manifest: str | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(manifest or f"name: {folder.name}\nversion: 0.1.0\n", encoding="utf-8")
    (folder / "__init__.py").write_text(textwrap.dedent(init), encoding="utf-8")


TOOL = '''
def _tool(ctx, name):
    schema = {"name": name, "description": name, "parameters": {"type": "object", "properties": {}}}
    ctx.register_tool(name=name, toolset="t", schema=schema, handler=lambda args, **kw: name + " ran")
'''

#: plugin name -> (__init__.py, plugin.yaml or None, a fragment of its one-line error, or None when it loads clean)
FAULTS: dict[str, tuple[str, str | None, str | None]] = {
    "bad-yaml": (TOOL + "def register(ctx):\n    _tool(ctx, 'never_seen')\n", "name: [unclosed\n",
                 "plugin.yaml is not valid YAML (line 2)"),
    "raises": ("def register(ctx):\n    raise RuntimeError('boom at register')\n", None,
               "register(ctx) raised RuntimeError: boom at register"),
    "builtin-name": (TOOL + "def register(ctx):\n    _tool(ctx, 'read_file')\n    _tool(ctx, 'builtin_ok')\n", None,
                     "tool 'read_file' not registered: the name is taken by a built-in tool of hermes-kernel"),
    "unknown-hook": (TOOL + "def register(ctx):\n    ctx.register_hook('on_moon_rise', print)\n"
                     "    _tool(ctx, 'moon_tool')\n", None, "hook 'on_moon_rise' is not a Hermes Agent hook; skipped"),
    "no-kernel-hook": ("def register(ctx):\n    ctx.register_hook('kanban_task_claimed', print)\n", None,
                       "hook 'kanban_task_claimed' has no kernel equivalent"),
    "platform": ("def register(ctx):\n    ctx.register_platform('irc', 'IRC', adapter_factory=None, check_fn=None)\n",
                 None, "platform adapters need the gateway (not yet available)"),
    "hook-raises": ("def _boom(**kw):\n    raise ValueError('hook boom')\n"
                    "def register(ctx):\n    ctx.register_hook('post_llm_call', _boom)\n", None, None),
    "twin-a": (TOOL + "def register(ctx):\n    _tool(ctx, 'twin_tool')\n", None, None),
    "twin-b": (TOOL + "def register(ctx):\n    _tool(ctx, 'twin_tool')\n    _tool(ctx, 'twin_b_only')\n", None,
               "tool 'twin_tool' not registered: the name is taken by plugin 'twin-a'"),
}


@pytest.fixture
def faulty(tmp_path: Path, hermes_home: Path, fake_model_server: FakeModelServer, fake_dists):
    for name, (init, manifest, _) in FAULTS.items():
        _write(hermes_home / "plugins" / name, init, manifest)
    fake_dists.add("hermes-ghost", {"hermes_agent.plugins": {"ghost": "no_such_module_here:register"}})
    return _runner(_env(fake_model_server, ",".join([*FAULTS, "hermes-ghost"])), tmp_path)


def test_the_fault_table_is_one_line_each_and_the_next_command_still_works(
    faulty, fake_model_server: FakeModelServer
) -> None:
    rows = _rows(faulty)
    for name, (_, _, fragment) in FAULTS.items():
        error = rows[name]["error"]
        if fragment is None:
            assert error is None, f"{name}: {error}"
        else:
            assert error is not None and fragment in error and "\n" not in error, f"{name}: {error}"
    ghost = rows["ghost"]
    assert ghost["kind"] == "entry point" and ghost["distribution"] == "hermes-ghost"
    assert "no_such_module_here" in ghost["error"] and "ModuleNotFoundError" in ghost["error"]

    doctor = faulty("doctor")
    for name in ("bad-yaml", "raises", "ghost"):
        (line,) = [line for line in doctor.stdout.splitlines() if f"hermes.plugins:{name}" in line]

    # The next command works, with every part that did load.
    fake_model_server.reply("still here")
    chat = faulty("chat", "-q", "hello")
    assert (chat.returncode, chat.stdout.strip()) == (0, "still here"), chat.stderr
    offered = [t["function"]["name"] for t in fake_model_server.requests[0].body["tools"]]
    assert {"builtin_ok", "moon_tool", "twin_tool", "twin_b_only"} <= set(offered)
    assert "never_seen" not in offered and offered.count("read_file") == 1 and offered.count("twin_tool") == 1
