"""Packages from PyPI written for Hermes Agent: on Hermes Agent 0.19.0 itself, and unchanged here.

The sample (tests/pypi_plugins.py, reported in docs/hermes-agent.md "Plugins
from PyPI") is installed once per session with ``hermes plugin install`` into
a virtual environment of the suite's own, from a local wheelhouse (offline).
The same wheels go into a ``--target`` folder that a real Hermes Agent 0.19.0
runs against in a subprocess. Each package is then checked the way a user
meets it: enabled, selected, and used by a scripted chat against the fake
model server.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import re
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.hermes_agent import LATEST, release_path
from tests.helpers import FakeDistributions, overlay_venv
from tests.pypi_plugins import NEEDS_HERMES_AGENT, SAMPLE, Sample, offline_pip_env

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
KEY = "sk-test-key-0123456789abcdef"


class Venv:
    """``hermes`` in an overlay virtual environment, offline pip, no HERMES_LOAD_PLUGINS."""

    def __init__(self, root: Path, *, existing: bool = False) -> None:
        self.python = root / "bin" / "python" if existing else overlay_venv(root)
        self.bin = self.python.parent
        self.env = {k: v for k, v in os.environ.items() if k not in ("HERMES_LOAD_PLUGINS", "PYTHONPATH")}
        self.env.update(offline_pip_env())

    def __call__(self, *args: str, extra: dict[str, str] | None = None, cwd: Path | None = None,
                 input: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        env = {**self.env, "HERMES_HOME": os.environ["HERMES_HOME"], **(extra or {})}
        return subprocess.run([str(self.python), "-m", "hermes.kernel", *args], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=300, input=input)  # fmt: skip


@contextmanager
def _once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[tuple[Path, Path | None]]:
    """A folder shared by every xdist worker of this run, and the result file of whoever built it first.

    Yields ``(root, result)``: ``result`` is None for the worker that must build (it writes
    ``root / "result"`` when done), else the file the first one wrote.
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root = shared / name
    root.mkdir(exist_ok=True)
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / "result"
        yield root, (done if done.exists() else None)


@pytest.fixture(scope="session")
def sample_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Venv, str]:
    """One environment holding the whole sample, installed by ``hermes plugin install`` (and its output).

    Built once per run and shared by the xdist workers; tests never change it (their homes are their own).
    """
    with _once_per_run(tmp_path_factory, "pypi-sample") as (root, result):
        if result is not None:
            return Venv(root / "venv", existing=True), result.read_text(encoding="utf-8")
        venv = Venv(root / "venv")
        proc = subprocess.run(
            [str(venv.python), "-m", "hermes.kernel", "plugin", "install", *(s.requirement for s in SAMPLE)],
            capture_output=True, text=True, env={**venv.env, "HERMES_HOME": str(root / "home")}, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        (root / "result").write_text(proc.stdout, encoding="utf-8")
        return venv, proc.stdout


@pytest.fixture(scope="session")
def on_hermes_agent(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What Hermes Agent 0.19.0 made of each sample package (tests/e2e/hermes_agent_probe.py), once per run."""
    with _once_per_run(tmp_path_factory, "pypi-on-hermes-agent") as (root, result):
        if result is not None:
            return json.loads(result.read_text(encoding="utf-8"))
        found = _probe_hermes_agent(root)
        (root / "result").write_text(json.dumps(found), encoding="utf-8")
        return found


def _probe_hermes_agent(root: Path) -> dict[str, Any]:
    target, home = root / "target", root / "home"
    home.mkdir()
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-compile", "--target", str(target),
         *(s.requirement for s in SAMPLE)],
        capture_output=True, text=True, env={**os.environ, **offline_pip_env()}, timeout=600,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "ANTHROPIC_"))}
    env.update(HERMES_HOME=str(home), HOME=str(home), PYTHONPATH=f"{target}{os.pathsep}{release_path(LATEST)}")
    sample = json.dumps([{**s._asdict(), "dist": s.dist} for s in SAMPLE])
    proc = subprocess.run([sys.executable, str(HERE / "hermes_agent_probe.py"), str(target), sample],
                          capture_output=True, text=True, env=env, cwd=root, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _id(sample: Sample) -> str:
    return sample.dist


# --- Hermes Agent 0.19.0 itself ------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLE, ids=_id)
def test_on_hermes_agent_itself(sample: Sample, on_hermes_agent: dict[str, Any]) -> None:
    row = on_hermes_agent["packages"][sample.dist]
    if sample.kind in ("memory", "model"):
        # Declared only in a group 0.19.0 does not read: there it is not even seen.
        assert row == {"seen": False}
        return
    assert row["seen"] and not row.get("error"), row
    if sample.kind == "folder":
        assert row["installer"] == 0 and sample.expect in row["result"], row
        return
    assert (row["tools"], row["hooks"]) == (sorted(sample.tools), sorted(sample.hooks)), row
    assert set(sample.commands) <= set(row["commands"]), row
    if sample.call[0]:
        assert '"error"' not in row["result"][:40], row


def test_the_sample_declares_every_group_this_layer_reads(on_hermes_agent: dict[str, Any]) -> None:
    assert on_hermes_agent["groups"] == [
        "hermes.memory_providers", "hermes_agent.memory_providers", "hermes_agent.model_providers", "hermes_agent.plugins",
    ]  # fmt: skip


# --- here ------------------------------------------------------------------------------------


def test_plugin_install_reports_every_package_of_the_sample(sample_venv: tuple[Venv, str]) -> None:
    venv, output = sample_venv
    for sample in SAMPLE:
        assert f"installed {sample.dist} " in output, output
    assert "hermes_agent.memory_providers: verbatim" in output and "hermes_agent.model_providers: apertis" in output
    assert "hermes.memory_providers: hermes-okf" in output
    assert not (venv.bin / "hermes").exists()  # the kernel's command stays the only `hermes`


def _chat(venv: Venv, server: FakeModelServer, sample: Sample, extra: dict[str, str]) -> dict[str, Any]:
    """One scripted turn that calls the sample's tool; the tool message the model got back."""
    server.tool_calls((sample.call[0], json.loads(sample.call[1])))
    server.reply("done")
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.openai_base_url, "HERMES_MODEL__PROVIDER": "openai",
           "HERMES_MODEL__NAME": "test-model", "HERMES_MODEL__TIMEOUT": "10", **extra}  # fmt: skip
    chat = venv("chat", "-q", "what do you remember about staging?", extra=env, cwd=Path(os.environ["HERMES_HOME"]).parent)
    assert chat.returncode == 0, chat.stderr
    offered = {t["function"]["name"] for t in server.requests[0].body.get("tools", [])}
    assert sample.call[0] in offered
    (tool,) = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    return tool


MEMORY = [s for s in SAMPLE if s.kind in ("memory", "folder")]


def _only(sample: Sample) -> dict[str, str]:
    """Load this sample alone: the whole sample shares one environment, and its guard plugins
    (caspase, agentguard, ...) would otherwise veto the other packages' tools, as they would on
    Hermes Agent with all of them enabled. A folder counts under its own name."""
    return {"HERMES_LOAD_PLUGINS": f"{sample.dist},{sample.name}"}


@pytest.mark.parametrize("sample", MEMORY, ids=_id)
def test_memory_provider_from_pypi_in_a_chat(sample: Sample, sample_venv: tuple[Venv, str], hermes_home: Path,
                                             fake_model_server: FakeModelServer) -> None:  # fmt: skip
    venv, _ = sample_venv
    only = _only(sample)
    if sample.kind == "folder":  # the package's own installer writes the folder, as on Hermes Agent
        shim = subprocess.run([str(venv.bin / sample.dist), "install-shim", "--hermes-home", str(hermes_home)],
                              capture_output=True, text=True, env=venv.env, timeout=120)  # fmt: skip
        assert shim.returncode == 0, shim.stderr
    assert venv("plugin", "enable", sample.name, extra=only).returncode == 0
    if sample.kind == "memory":  # its own schema's questions, every default taken; it selects the provider
        setup = venv("memory", "setup", sample.name, input="\n" * 12, extra=only)
        assert setup.returncode == 0 and f"memory provider {sample.name} is set up" in setup.stdout, setup.stderr
    else:
        assert venv("config", "set", "memory.provider", sample.name, extra=only).returncode == 0
    status = json.loads(venv("memory", "status", "--json", extra=only).stdout)
    assert [(p["name"], p["available"]) for p in status["providers"]] == [("builtin", True), (sample.name, True)]
    tool = _chat(venv, fake_model_server, sample, only)
    assert sample.expect in tool["content"], tool


def test_model_provider_from_pypi_in_a_chat(sample_venv: tuple[Venv, str], fake_model_server: FakeModelServer) -> None:
    venv, _ = sample_venv
    enabled = venv("plugin", "enable", "apertis", extra={"HERMES_LOAD_PLUGINS": "hermes-apertis-provider"})
    assert enabled.returncode == 0, enabled.stderr
    fake_model_server.reply("hello from the fake apertis")
    env = {"APERTIS_API_KEY": KEY, "APERTIS_BASE_URL": fake_model_server.openai_base_url, "HERMES_MODEL__PROVIDER": "apertis",
           "HERMES_LOAD_PLUGINS": "hermes-apertis-provider"}  # fmt: skip
    chat = venv("chat", "-q", "hi", extra=env, cwd=Path(os.environ["HERMES_HOME"]).parent)
    assert chat.returncode == 0, chat.stderr
    assert "hello from the fake apertis" in chat.stdout
    (request,) = fake_model_server.requests
    # The profile's key variable and first model, from the package's own ProviderProfile.
    assert request.api_key == KEY and request.body["model"] == "gpt-5.6-sol"


GENERAL = [s for s in SAMPLE if s.kind == "plugin"]
#: Parts of a plugin that use what hermes-kernel has no slot for: each is one note in `plugin list`,
#: the rest of the plugin loads (docs/hermes-agent.md, "General plugins").
KNOWN_GAPS = {
    "hardproof": ("skill 'orchestrate' kept but not offered", "skill 'verify' kept but not offered", "hook 'pre_verify' has no kernel equivalent"),
    "hermes-chat-recorder": ("hook 'pre_gateway_dispatch' has no kernel equivalent",),
    "agentguard-spend-hermes": (
        "ctx.register_middleware ignored", "hook 'pre_auxiliary_call' is not a Hermes Agent hook",
        "hook 'post_auxiliary_call' is not a Hermes Agent hook",
    ),
}


@pytest.mark.parametrize("sample", GENERAL, ids=_id)
def test_general_plugin_from_pypi_loads_here(sample: Sample, sample_venv: tuple[Venv, str]) -> None:
    venv, _ = sample_venv
    enabled = venv("plugin", "enable", sample.name, extra=_only(sample))
    assert enabled.returncode == 0, enabled.stderr
    listed = venv("plugin", "list", "--json", extra=_only(sample))
    rows = [r for r in json.loads(listed.stdout) if r["name"] == sample.name]
    notes = "; ".join(r["error"] or "" for r in rows)
    assert rows and "PluginLoadError" not in notes, notes  # loaded
    gaps = KNOWN_GAPS.get(sample.dist, ())
    assert all(gap in notes for gap in gaps), notes
    # Nothing else went wrong: no part raised, failed or was refused.
    assert not re.search(r"raised|failed|Error|not registered|taken", notes), notes
    assert bool(notes) == bool(gaps), notes


# --- the full install path, and its faults ---------------------------------------------------


def test_install_enable_and_chat_with_two_packages_one_requiring_hermes_agent(
    tmp_path: Path, hermes_home: Path, fake_model_server: FakeModelServer
) -> None:
    venv = Venv(tmp_path / "venv")
    okf = next(s for s in SAMPLE if s.name == "hermes-okf")
    installed = venv("plugin", "install", okf.requirement, NEEDS_HERMES_AGENT)
    assert installed.returncode == 0, installed.stderr
    assert "installed tokenlab-hermes-provider 0.1.0" in installed.stdout
    assert "tokenlab-hermes-provider requires hermes-agent; installed without it" in installed.stdout
    assert "hermes_agent.plugins: tokenlab-provider" in installed.stdout
    shown = subprocess.run([str(venv.python), "-m", "pip", "show", "hermes-agent"], capture_output=True, text=True, env=venv.env)
    assert shown.returncode != 0 and not (venv.bin / "hermes").exists()
    assert venv("--version").stdout.startswith("hermes-kernel ")
    assert venv("plugin", "enable", "hermes-okf").returncode == 0
    assert venv("config", "set", "memory.provider", "hermes-okf").returncode == 0
    tool = _chat(venv, fake_model_server, okf, {})
    assert okf.expect in tool["content"], tool


def test_hermes_agent_itself_is_refused_in_one_line(tmp_path: Path) -> None:
    venv = Venv(tmp_path / "venv")
    refused = venv("plugin", "install", "hermes-agent")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "its `hermes` command would replace hermes-kernel's" in refused.stderr
    assert venv("plugin", "list").returncode == 0  # the next command works


def test_a_failing_install_installs_nothing_and_the_next_command_works(tmp_path: Path) -> None:
    venv = Venv(tmp_path / "venv")
    broken = tmp_path / "broken-plugin"
    broken.mkdir()
    (broken / "setup.py").write_text("raise SystemExit('this package cannot be built')\n", encoding="utf-8")
    okf = next(s for s in SAMPLE if s.name == "hermes-okf")
    failed = venv("plugin", "install", okf.requirement, str(broken))
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines()[-1].startswith("error: pip install failed with exit code")
    shown = subprocess.run([str(venv.python), "-m", "pip", "show", "hermes-okf"], capture_output=True, text=True, env=venv.env)
    assert shown.returncode != 0  # the good package was not installed either
    listed = venv("plugin", "list")
    assert listed.returncode == 0 and "no plugins installed" in listed.stdout


def test_a_package_with_a_hermes_command_of_its_own_is_refused(tmp_path: Path) -> None:
    venv = Venv(tmp_path / "venv")
    project = tmp_path / "lookalike"
    project.mkdir()
    (project / "lookalike.py").write_text("def main():\n    print('not hermes-kernel')\n", encoding="utf-8")
    (project / "setup.py").write_text(
        "from setuptools import setup\n"
        "setup(name='hermes-lookalike', version='1.0', py_modules=['lookalike'],\n"
        "      entry_points={'console_scripts': ['hermes = lookalike:main'], 'hermes_agent.plugins': ['look = lookalike']})\n",
        encoding="utf-8",
    )
    refused = venv("plugin", "install", str(project))
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "error: hermes-lookalike installs a `hermes` command of its own, which would replace hermes-kernel's; nothing "
        "was installed (run it in an environment of its own, e.g. `pipx install hermes-lookalike`)"
    ]
    assert not (venv.bin / "hermes").exists()
    assert venv("--version").stdout.startswith("hermes-kernel ")


@pytest.mark.parametrize(
    ("group", "slot", "key"),
    [("hermes_agent.memory_providers", "hermes.memory_providers", "memory.provider"),
     ("hermes_agent.model_providers", "hermes.model_providers", "model.provider")],
)  # fmt: skip
def test_an_entry_point_naming_a_missing_module(group: str, slot: str, key: str, tmp_path: Path) -> None:
    venv = Venv(tmp_path / "venv")
    site = subprocess.run([str(venv.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    FakeDistributions(Path(site)).add("ghost-plugin", {group: {"ghost": "ghost_module_that_is_gone:register"}})
    listed = json.loads(venv("plugin", "list", "--json").stdout)
    (row,) = [r for r in listed if r["name"] == "ghost"]
    assert row["group"] == slot and row["error"] == "ModuleNotFoundError: No module named 'ghost_module_that_is_gone'"
    assert venv("config", "set", key, "ghost").returncode == 0
    chat = venv("chat", "-q", "hi", extra={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert chat.returncode != 0
    (line,) = [ln for ln in chat.stderr.splitlines() if ln.startswith("error:")]
    assert "'ghost'" in line and "ghost_module_that_is_gone" in line
    assert "Traceback" not in chat.stderr
    assert venv("config", "set", key, "builtin" if key == "memory.provider" else "openai").returncode == 0
    assert venv("plugin", "list").returncode == 0  # the next command works
