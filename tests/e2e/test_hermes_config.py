"""A config.yaml written by Hermes Agent itself, driven through the real ``hermes`` CLI in subprocesses.

Each row of the fault table: exit code, what the screen says, what is stored
(the file byte for byte, and what Hermes Agent reads back), and that the next
command still works. Hermes Agent releases come from PyPI (tests/hermes_agent.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.hermes_agent import LATEST, run_release

OLDER = "0.17.0"
SECRET = "sk-test-secret-0123456789abcdef"

WRITE = """
import copy, json, sys
from hermes_cli import config as c
data = copy.deepcopy(c.DEFAULT_CONFIG)
for key, value in json.loads(sys.argv[1] if len(sys.argv) > 1 else {extra!r}).items():
    if isinstance(value, dict) and isinstance(data.get(key), dict):
        data[key].update(value)
    else:
        data[key] = value
try:
    c.save_config(data, strip_defaults={strip})  # every key, as an older release (or a full export) writes it
except TypeError:
    c.save_config(data)
"""


def hermes_writes(home: Path, extra: dict[str, Any], *, version: str = LATEST, full: bool = True) -> str:
    """config.yaml as Hermes Agent ``version``'s own save_config writes it; returns its text."""
    home.mkdir(parents=True, exist_ok=True)
    run_release(version, WRITE.format(extra=json.dumps(extra), strip=not full), home)
    return (home / "config.yaml").read_text()


def hermes_reads(home: Path, *keys: str, version: str = LATEST) -> dict[str, Any]:
    """What Hermes Agent's own load_config sees at dotted ``keys``."""
    code = f"""
import json
from hermes_cli.config import load_config
data = load_config()
out = {{}}
for key in {list(keys)!r}:
    node = data
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    out[key] = node
print(json.dumps(out))
"""
    return json.loads(run_release(version, code, home).stdout.strip().splitlines()[-1])


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:  # fmt: skip
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "hermes.kernel", *args], capture_output=True, text=True,
        env={**base, "HERMES_RETRIES__BASE_DELAY": "0.01", "HERMES_MODEL__TIMEOUT": "10", **(env or {})},
        cwd=cwd, timeout=180,
    )  # fmt: skip


def origins(env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    result = run("config", "show", "--origin", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return {row["key"]: row for row in json.loads(result.stdout)}


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def other_server() -> Iterator[FakeModelServer]:
    """A second fake API: where a request must NOT go."""
    with FakeModelServer() as server:
        yield server


@pytest.mark.parametrize("version", [LATEST, OLDER])
def test_a_config_hermes_agent_wrote_is_applied_and_never_rewritten(
    version: str, hermes_home: Path, fake_model_server: FakeModelServer, other_server: FakeModelServer, tmp_path: Path
) -> None:
    text = hermes_writes(hermes_home, {
        "model": {"default": "users-model", "provider": "auto", "base_url": other_server.openai_base_url},
        "agent": {"max_turns": 2}, "memory": {"memory_char_limit": 3333},
        "plugins": {"enabled": ["disk-cleanup"]},
    }, version=version)  # fmt: skip
    env = {"OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": fake_model_server.openai_base_url}

    doctor = run("doctor", "--json", env=env)
    report = json.loads(doctor.stdout)
    assert [p for p in report["problems"] if "unknown key" in p] == []
    assert doctor.returncode == 0, report["problems"]
    notes = " ".join(report["notes"])
    for key in ("display", "_config_version", "plugins.enabled", "agent.gateway_timeout", "tts", "terminal"):
        assert notes.count(f" {key},") + notes.count(f" {key} (") == 1, key  # each Hermes Agent key named once

    seen = origins(env)
    assert seen["model.name"]["value"] == "users-model"
    assert seen["model.name"]["origin"] == "config.yaml via the Hermes Agent key model.default"
    assert seen["model.provider"]["origin"].endswith("(auto: OPENAI_API_KEY in environment)")
    assert seen["agent.max_iterations"]["value"] == 2
    assert seen["memory.memory_limit"] == {"key": "memory.memory_limit", "value": 3333,
                                           "origin": "config.yaml via the Hermes Agent key memory.memory_char_limit"}

    for _ in range(2):
        fake_model_server.tool_calls(("todo", {"todos": [{"id": "1", "content": "x", "status": "pending"}]}))
    fake_model_server.reply("done")
    chat = run("chat", "-q", "hello", env=env, cwd=tmp_path)
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout == "done\n"
    requests = fake_model_server.requests
    assert {r.body["model"] for r in requests} == {"users-model"}  # model.default, not the kernel's default model
    # agent.max_turns: 2 -> two calls may use tools; the third is the grace call, offered none.
    assert ["tools" in r.body for r in requests] == [True, True, False]
    # Hermes Agent never reads OPENAI_BASE_URL: set for hermes-kernel, it wins over the shared file's endpoint.
    assert other_server.requests == []
    assert requests[0].api_key == SECRET
    assert SECRET not in chat.stdout + chat.stderr + doctor.stdout

    memory = run("memory", "status", "--json", env=env)
    assert memory.returncode == 0, memory.stderr
    files = json.loads(memory.stdout)["providers"][0]["files"]
    assert (files["memory"]["limit"], files["user"]["limit"]) == (3333, 1375)  # memory.memory_char_limit applied

    assert (hermes_home / "config.yaml").read_text() == text  # reading never writes
    assert sorted(p.name for p in hermes_home.glob("config.yaml*")) == ["config.yaml"]
    assert run("config", "get", "model.name", env=env).stdout.strip() == "users-model"  # the next command works


def test_provider_auto_with_only_an_anthropic_key(
    hermes_home: Path, fake_model_server: FakeModelServer, other_server: FakeModelServer, tmp_path: Path
) -> None:
    hermes_writes(hermes_home, {"model": {"default": "claude-x", "provider": "auto",
                                          "base_url": other_server.openai_base_url}}, full=False)  # fmt: skip
    env = {"ANTHROPIC_API_KEY": SECRET, "ANTHROPIC_BASE_URL": fake_model_server.base_url}
    fake_model_server.reply("hi from claude")
    chat = run("chat", "-q", "hello", env=env, cwd=tmp_path)
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout == "hi from claude\n"
    [request] = fake_model_server.requests
    assert (request.api, request.body["model"]) == ("anthropic", "claude-x")
    assert other_server.requests == []  # Hermes Agent does not send an auto-resolved Anthropic call to model.base_url
    seen = origins(env)
    assert seen["model.provider"]["value"] == "anthropic"
    assert "ANTHROPIC_API_KEY in environment" in seen["model.provider"]["origin"]


def test_provider_auto_with_only_an_openai_key_in_dotenv(
    hermes_home: Path, fake_model_server: FakeModelServer, tmp_path: Path
) -> None:
    hermes_writes(hermes_home, {"model": {"default": "gpt-x", "provider": "auto", "base_url": ""}}, full=False)
    (hermes_home / ".env").write_text(f"OPENAI_API_KEY={SECRET}\nOPENAI_BASE_URL={fake_model_server.openai_base_url}\n")
    fake_model_server.reply("hi from openai")
    chat = run("chat", "-q", "hello", cwd=tmp_path)
    assert chat.returncode == 0, chat.stderr
    [request] = fake_model_server.requests
    assert (request.api, request.body["model"], request.api_key) == ("openai", "gpt-x", SECRET)
    seen = origins()
    assert seen["model.provider"]["origin"].endswith("(auto: OPENAI_API_KEY in .env)")
    shown = run("config", "show", "--origin")
    assert SECRET not in shown.stdout and shown.returncode == 0


def test_provider_auto_with_only_a_base_url(hermes_home: Path, fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    hermes_writes(hermes_home, {"model": {"default": "llama3", "provider": "auto",
                                          "base_url": fake_model_server.openai_base_url}}, full=False)  # fmt: skip
    fake_model_server.reply("local answer")
    chat = run("chat", "-q", "hello", cwd=tmp_path)
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout == "local answer\n"
    assert [(r.api, r.body["model"]) for r in fake_model_server.requests] == [("openai", "llama3")]


def test_provider_auto_with_nothing_is_one_line_naming_the_fix(hermes_home: Path, tmp_path: Path) -> None:
    text = hermes_writes(hermes_home, {"model": {"default": "m", "provider": "auto", "base_url": ""}}, full=False)
    line = one_line_error(run("chat", "-q", "hello", cwd=tmp_path))
    assert "model.provider is auto" in line and "`hermes config set model.provider anthropic`" in line
    assert "no 'hermes.model_providers' plugin named 'auto'" not in line
    shown = run("config", "show")
    assert shown.returncode == 0, shown.stderr  # everything else still works
    doctor = run("doctor", "--json")
    assert doctor.returncode == 1
    problems = json.loads(doctor.stdout)["problems"]
    assert sum("model.provider is auto" in p for p in problems) == 1
    assert not any("named 'auto'" in p for p in problems)
    fixed = run("config", "set", "model.provider", "anthropic")
    assert fixed.returncode == 0, fixed.stderr
    assert (hermes_home / "config.yaml").read_text() == text.replace("provider: auto", "provider: anthropic")
    assert hermes_reads(hermes_home, "model.provider", "model.default") == {"model.provider": "anthropic",
                                                                           "model.default": "m"}  # fmt: skip


def test_both_dialects_for_one_setting_the_kernels_key_wins(
    hermes_home: Path, fake_model_server: FakeModelServer, tmp_path: Path
) -> None:
    hermes_writes(hermes_home, {"model": {"default": "hermes-name", "provider": "openai",
                                          "base_url": fake_model_server.openai_base_url},
                                "agent": {"max_turns": 1, "max_iterations": 40}}, full=False)  # fmt: skip
    env = {"OPENAI_API_KEY": SECRET}
    assert run("config", "set", "model.name", "kernel-name", env=env).returncode == 0  # Hermes Agent drops it on save
    fake_model_server.reply("ok")
    assert run("chat", "-q", "hello", env=env, cwd=tmp_path).returncode == 0
    assert [r.body["model"] for r in fake_model_server.requests] == ["kernel-name"]
    seen = origins(env)
    assert (seen["agent.max_iterations"]["value"], seen["agent.max_iterations"]["origin"]) == (40, "config.yaml")
    notes = json.loads(run("doctor", "--json", env=env).stdout)["notes"]
    assert any("model.default is not used: model.name is set" in n for n in notes)
    assert any("agent.max_turns is not used: agent.max_iterations is set" in n for n in notes)


def test_plugins_enabled_list_never_makes_the_kernel_refuse_the_config(hermes_home: Path) -> None:
    hermes_writes(hermes_home, {"plugins": {"enabled": ["disk-cleanup", "spotify"], "disabled": []}}, full=False)
    for args in (("plugin", "list", "--json"), ("config", "show"), ("sessions", "list")):
        result = run(*args)
        assert result.returncode == 0, (args, result.stderr)
        assert "plugins" not in result.stderr
    notes = json.loads(run("doctor", "--json").stdout)["notes"]
    assert sum("plugins.enabled" in n for n in notes) == 1


def test_a_hermes_key_of_the_wrong_type_is_one_line_and_the_rest_applies(hermes_home: Path) -> None:
    (hermes_home).mkdir(parents=True, exist_ok=True)
    (hermes_home / "config.yaml").write_text("model:\n  default: m\nagent:\n  max_turns: lots\n"
                                             "memory:\n  memory_char_limit: 3000\n")  # fmt: skip
    shown = run("config", "show", "--origin", "--json")
    assert shown.returncode == 0
    warnings = [line for line in shown.stderr.splitlines() if "agent.max_turns" in line]
    assert len(warnings) == 1 and "'lots' is not allowed" in warnings[0] and "agent.max_iterations" in warnings[0]
    rows = {row["key"]: row for row in json.loads(shown.stdout)}
    assert (rows["agent.max_iterations"]["value"], rows["agent.max_iterations"]["origin"]) == (90, "default")
    assert rows["memory.memory_limit"]["value"] == 3000
    doctor = run("doctor", "--json")
    assert doctor.returncode == 1
    assert sum("agent.max_turns" in p for p in json.loads(doctor.stdout)["problems"]) == 1
    fixed = run("config", "set", "agent.max_turns", "40")  # the Hermes key, checked as agent.max_iterations
    assert fixed.returncode == 0, fixed.stderr
    assert origins()["agent.max_iterations"]["value"] == 40
    assert run("config", "get", "agent.max_turns").stdout == "40\n"  # read back by its Hermes Agent name too
    bad = one_line_error(run("config", "set", "agent.max_turns", "many"))
    assert "agent.max_turns: 'many' is not allowed" in bad


def test_the_kernels_own_key_of_the_wrong_type_still_refuses_the_config(hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True, exist_ok=True)
    (hermes_home / "config.yaml").write_text("display:\n  skin: mono\nagent:\n  max_iterations: lots\n")
    line = one_line_error(run("config", "show"))
    assert "agent.max_iterations: 'lots' is not allowed" in line and "hermes config set agent.max_iterations" in line
    assert run("config", "set", "agent.max_iterations", "20").returncode == 0  # the fix works on a refused file
    assert run("config", "show").returncode == 0


def test_config_set_keeps_every_hermes_key_byte_for_byte(hermes_home: Path) -> None:
    text = hermes_writes(hermes_home, {"model": {"default": "users-model", "provider": "anthropic"},
                                       "agent": {"max_turns": 77}}, version=OLDER)  # fmt: skip
    assert run("config", "set", "model.name", "kernel-model").returncode == 0
    assert run("config", "set", "compression.threshold", "0.6").returncode == 0
    after = (hermes_home / "config.yaml").read_text()
    old, new = text.splitlines(), after.splitlines()
    assert [line for line in new if line not in old] == ["  name: kernel-model", "  threshold: 0.6"]
    assert [line for line in old if line not in new] == ["  threshold: 0.5"]
    assert len(new) == len(old) + 1
    assert not list(hermes_home.glob("config.yaml.*"))  # no backup, no version stamp
    seen = hermes_reads(hermes_home, "model.default", "agent.max_turns", "compression.threshold", "display.skin",
                        version=OLDER)  # fmt: skip
    assert seen == {"model.default": "users-model", "agent.max_turns": 77, "compression.threshold": 0.6,
                    "display.skin": "default"}  # fmt: skip
    assert origins()["model.name"] == {"key": "model.name", "value": "kernel-model", "origin": "config.yaml"}


def test_secrets_in_a_hermes_file_stay_masked(hermes_home: Path) -> None:
    hermes_writes(hermes_home, {"model": {"default": "m", "provider": "custom", "base_url": "http://127.0.0.1:9/v1",
                                          "api_key": SECRET}}, full=False)  # fmt: skip
    for args in (("config", "show"), ("config", "show", "--origin"), ("config", "show", "--origin", "--json"),
                 ("doctor",), ("config", "get", "credentials")):  # fmt: skip
        result = run(*args)
        assert SECRET not in result.stdout + result.stderr, args
    seen = origins()
    assert seen["credentials.openai"]["origin"] == "config.yaml via the Hermes Agent key model.api_key"


def test_a_read_only_home_shows_the_config_and_writes_nothing(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="hermes-ro-", dir="/tmp"))  # outside pytest's 0700 folder: others may read it
    try:
        home = root / "home"
        text = hermes_writes(home, {"model": {"default": "users-model", "provider": "auto", "base_url": ""}})
        os.chmod(home / "config.yaml", 0o444)
        os.chmod(home, 0o555)
        os.chmod(root, 0o755)
        before = sorted(p.name for p in home.iterdir())
        # root ignores file modes, so the CLI runs as nobody there; anyone else is already kept out by the modes.
        prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups") if os.geteuid() == 0 else ()
        env = {"HERMES_HOME": str(home), "HOME": str(root), "ANTHROPIC_API_KEY": SECRET}
        shown = run("config", "show", "--origin", env=env, prefix=prefix, cwd=root)
        assert shown.returncode == 0, shown.stderr
        assert "model.name = \"users-model\"  [config.yaml via the Hermes Agent key model.default]" in shown.stdout
        assert run("config", "get", "model.provider", env=env, prefix=prefix, cwd=root).stdout.strip() == "anthropic"
        refused = run("config", "set", "model.name", "x", env=env, prefix=prefix, cwd=root)
        assert refused.returncode != 0 and "Traceback" not in refused.stderr
        assert sorted(p.name for p in home.iterdir()) == before
        assert (home / "config.yaml").read_text() == text
    finally:
        os.chmod(root / "home", 0o755) if (root / "home").exists() else None
        shutil.rmtree(root, ignore_errors=True)
