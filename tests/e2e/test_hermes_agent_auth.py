"""Credentials shared with Hermes Agent: its auth.json, written by a real release, through the real CLI.

Hermes Agent's own ``hermes auth add`` code writes the file; hermes-kernel's
``hermes auth ...`` and ``hermes chat -q`` then run in subprocesses against the
fake model server. Every test checks that Hermes Agent's file is byte-identical
afterwards unless the user asked for a change, and what landed in the kernel's
own file (``hermes-kernel/auth.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.kernel.credentials import key_id
from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.hermes_agent import LATEST, run_release

WORK, SECOND, CLAUDE = "sk-hermes-work-0123456789abcdef", "sk-hermes-second-fedcba9876543210", "sk-ant-hermes-0123456789ab"
KERNEL_KEY = "sk-kernel-own-00112233445566778899"
OLDER = "0.17.0"  # the pool layout is the same from 0.17.0 on; both are checked where the format matters

# Hermes Agent imports httpx at module level; its `auth add` for API keys never uses it (no network).
STUB = """
import sys, types
class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (Exception,), {})
sys.modules.setdefault("httpx", _Stub("httpx"))
"""

ADD = STUB + """
from types import SimpleNamespace
from hermes_cli.auth_commands import auth_add_command
for provider, key, label in {entries!r}:
    auth_add_command(SimpleNamespace(provider=provider, auth_type="api_key", api_key=key, label=label))
"""

# Hermes Agent reading its file back: the pools' labels per provider, from its own loader.
READ_BACK = STUB + """
import json
from hermes_cli.auth import read_credential_pool
from agent.credential_pool import load_pool
print(json.dumps({name: [e.label for e in load_pool(name).entries()] for name in sorted(read_credential_pool())}))
"""


def hermes_agent_home(home: Path, entries: list[tuple[str, str, str | None]], version: str = LATEST) -> Path:
    """``home`` with an auth.json written by Hermes Agent ``version``'s `hermes auth add`."""
    home.mkdir(parents=True, exist_ok=True)
    run_release(version, ADD.replace("{entries!r}", repr(entries)), home)
    assert json.loads((home / "auth.json").read_text())["credential_pool"]  # Hermes Agent's layout
    return home / "auth.json"


@pytest.fixture(scope="session")
def hermes_agent_template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One Hermes Agent home per release (OpenAI key 'work' then 'second', Anthropic key), copied by tests."""
    made = {}
    for version in (LATEST, OLDER):
        home = tmp_path_factory.mktemp(f"hermes-agent-{version}") / "home"
        hermes_agent_home(home, [("openai-api", WORK, "work"), ("openai-api", SECOND, "second"),
                                 ("anthropic", CLAUDE, None)], version)
        made[version] = home
    return made


@pytest.fixture
def shared_home(hermes_home: Path, hermes_agent_template: dict[str, Path]) -> Path:
    """The test's HERMES_HOME holding the latest release's auth.json; returns that file."""
    shutil.copytree(hermes_agent_template[LATEST], hermes_home)
    return hermes_home / "auth.json"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kernel_file(home: Path) -> dict:
    return json.loads((home / "hermes-kernel" / "auth.json").read_text())


def read_back(home: Path, version: str = LATEST) -> dict[str, list[str]]:
    return json.loads(run_release(version, READ_BACK, home).stdout)


def chat_env(server: FakeModelServer, **extra: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.openai_base_url, "HERMES_MODEL__PROVIDER": "openai",
            "HERMES_MODEL__NAME": "test-model", "HERMES_RETRIES__BASE_DELAY": "0.01",
            "HERMES_MODEL__TIMEOUT": "10", **extra}


def warnings(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("hermes: WARNING: ")]


@pytest.mark.parametrize("version", [LATEST, OLDER])
def test_hermes_agent_keys_are_listed_masked_and_marked(hermes, hermes_home: Path, version: str,
                                                        hermes_agent_template: dict[str, Path]) -> None:
    shutil.copytree(hermes_agent_template[version], hermes_home)
    before = digest(hermes_home / "auth.json")
    result = hermes("auth", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [(r["provider"], r["label"], r["key"], r["source"]) for r in rows] == [
        ("anthropic", "api-key-1", "sk-a...89ab", "hermes-agent"),
        ("openai", "work", "sk-h...cdef", "hermes-agent"),
        ("openai", "second", "sk-h...3210", "hermes-agent"),
    ]
    assert {r["file"] for r in rows} == {str(hermes_home / "auth.json")}
    table = hermes("auth", "list")
    assert table.returncode == 0 and table.stdout.count("Hermes Agent ") >= 3
    assert f"read from {hermes_home / 'auth.json'}" in table.stdout.replace("\n", " ")
    for secret in (WORK, SECOND, CLAUDE):
        assert secret not in result.stdout + result.stderr + table.stdout + table.stderr
    assert digest(hermes_home / "auth.json") == before
    assert not (hermes_home / "hermes-kernel").exists()  # listing writes nothing at all
    assert read_back(hermes_home, version) == {"anthropic": ["api-key-1"], "openai-api": ["work", "second"]}


def test_chat_sends_the_hermes_agent_key_and_leaves_its_file_alone(
        hermes, shared_home: Path, fake_model_server: FakeModelServer) -> None:
    before = digest(shared_home)
    fake_model_server.reply("hello from the fake")
    result = hermes("chat", "-q", "hi", env=chat_env(fake_model_server))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello from the fake\n"
    assert fake_model_server.requests[0].headers["authorization"] == f"Bearer {WORK}"  # fill_first: Hermes' first
    assert digest(shared_home) == before
    own = kernel_file(shared_home.parent)
    assert list(own["usage"]) == [key_id(WORK)]  # the kernel's usage count, in the kernel's file
    assert oct(os.stat(shared_home.parent / "hermes-kernel" / "auth.json").st_mode & 0o777) == "0o600"
    assert WORK not in json.dumps(own) and WORK not in result.stderr
    assert read_back(shared_home.parent) == {"anthropic": ["api-key-1"], "openai-api": ["work", "second"]}


def test_a_429_rotates_to_the_next_hermes_key_and_the_cooldown_stays_in_the_kernels_file(
        hermes, shared_home: Path, fake_model_server: FakeModelServer) -> None:
    before = digest(shared_home)
    fake_model_server.fault("rate_limit", retry_after=30).reply("from the second key")
    result = hermes("chat", "-q", "hi", env=chat_env(fake_model_server))
    assert result.returncode == 0, result.stderr
    assert [r.api_key for r in fake_model_server.requests] == [WORK, SECOND]
    state = kernel_file(shared_home.parent)["state"]
    assert list(state) == [key_id(WORK)] and state[key_id(WORK)]["status"] == 429
    assert digest(shared_home) == before  # Hermes Agent's own last_status stays untouched
    rows = json.loads(hermes("auth", "list", "openai", "--json").stdout)
    assert [(r["label"], r["status"]) for r in rows] == [("work", "cooling_down"), ("second", "ok")]
    reset = hermes("auth", "reset", "openai")
    assert reset.returncode == 0
    assert reset.stdout.strip() == (f"cleared 1 cooldown in {shared_home.parent / 'hermes-kernel' / 'auth.json'} "
                                    f"(Hermes Agent's {shared_home} is unchanged)")
    assert kernel_file(shared_home.parent)["state"] == {} and digest(shared_home) == before


def test_hermes_agent_pool_strategy_applies_to_the_kernel_pool(
        hermes, shared_home: Path, fake_model_server: FakeModelServer) -> None:
    # Hermes Agent names the pool openai-api; the kernel's openai pool follows its round_robin.
    (shared_home.parent / "config.yaml").write_text("credential_pool_strategies:\n  openai-api: Round_Robin\n")
    fake_model_server.reply("one").reply("two").reply("three")
    for _ in range(3):
        assert hermes("chat", "-q", "hi", env=chat_env(fake_model_server)).returncode == 0
    assert [r.api_key for r in fake_model_server.requests] == [WORK, SECOND, WORK]


def test_the_kernels_setting_wins_over_hermes_agents(hermes, shared_home: Path,
                                                     fake_model_server: FakeModelServer) -> None:
    (shared_home.parent / "config.yaml").write_text(
        "credential_pool_strategies:\n  openai-api: round_robin\n  openai: fill_first\n")
    fake_model_server.reply("one").reply("two")
    for _ in range(2):
        assert hermes("chat", "-q", "hi", env=chat_env(fake_model_server)).returncode == 0
    assert [r.api_key for r in fake_model_server.requests] == [WORK, WORK]


def test_kernel_keys_come_before_hermes_agent_keys_for_one_provider(
        hermes, shared_home: Path, fake_model_server: FakeModelServer) -> None:
    before = digest(shared_home)
    added = hermes("auth", "add", "openai", "--key", KERNEL_KEY, "--label", "mine")
    own_path = shared_home.parent / "hermes-kernel" / "auth.json"
    assert added.returncode == 0
    assert added.stdout.strip() == (f"added openai key 'mine' (sk-k...8899) to {own_path} "
                                    f"(hermes-kernel's own file; Hermes Agent's {shared_home} is unchanged)")
    assert oct(own_path.stat().st_mode & 0o777) == "0o600"
    rows = json.loads(hermes("auth", "list", "openai", "--json").stdout)
    assert [(r["label"], r["source"]) for r in rows] == [
        ("mine", "hermes-kernel/auth.json"), ("work", "hermes-agent"), ("second", "hermes-agent")]
    fake_model_server.reply("ok")
    assert hermes("chat", "-q", "hi", env=chat_env(fake_model_server)).returncode == 0
    assert fake_model_server.requests[0].api_key == KERNEL_KEY
    # A key Hermes Agent already has is not stored twice.
    again = hermes("auth", "add", "openai", "--key", WORK)
    assert again.returncode == 1 and f"already in Hermes Agent's {shared_home} as 'work'" in again.stderr
    assert digest(shared_home) == before
    assert [e["label"] for e in kernel_file(shared_home.parent)["credentials"]["openai"]] == ["mine"]


def test_remove_hides_a_hermes_agent_key_and_add_brings_it_back(
        hermes, shared_home: Path, fake_model_server: FakeModelServer) -> None:
    before = digest(shared_home)
    own_path = shared_home.parent / "hermes-kernel" / "auth.json"
    removed = hermes("auth", "remove", "openai", "work")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == (
        f"removed Hermes Agent's openai key 'work' (sk-h...cdef): hidden from hermes-kernel (recorded in {own_path}); "
        f"Hermes Agent's {shared_home} is unchanged (pass --hermes-agent to delete it there)")
    assert digest(shared_home) == before
    assert kernel_file(shared_home.parent)["hidden"] == {"openai": [key_id(WORK)]}
    assert [r["label"] for r in json.loads(hermes("auth", "list", "openai", "--json").stdout)] == ["second"]
    fake_model_server.reply("ok")
    assert hermes("chat", "-q", "hi", env=chat_env(fake_model_server)).returncode == 0
    assert fake_model_server.requests[0].api_key == SECOND  # the hidden key is not used
    assert read_back(shared_home.parent)["openai-api"] == ["work", "second"]  # Hermes Agent still has it
    restored = hermes("auth", "add", "openai", "--key", WORK)
    assert restored.returncode == 0 and "restored Hermes Agent's openai key 'work'" in restored.stdout
    assert [r["label"] for r in json.loads(hermes("auth", "list", "openai", "--json").stdout)] == ["work", "second"]
    assert digest(shared_home) == before


def test_remove_with_the_flag_deletes_the_key_from_hermes_agents_file(hermes, shared_home: Path) -> None:
    hermes_id = json.loads(shared_home.read_text())["credential_pool"]["openai-api"][1]["id"]
    removed = hermes("auth", "remove", "openai", hermes_id, "--hermes-agent", "--json")  # by Hermes Agent's id
    assert removed.returncode == 0, removed.stderr
    data = json.loads(removed.stdout)
    assert data["file"] == str(shared_home) and data["hermes_agent_file_changed"] is True
    assert data["removed"] == [{"label": "second", "key": "sk-h...3210", "source": "hermes-agent"}]
    assert oct(shared_home.stat().st_mode & 0o777) == "0o600"
    on_disk = json.loads(shared_home.read_text())
    assert [e["label"] for e in on_disk["credential_pool"]["openai-api"]] == ["work"]
    assert on_disk["credential_pool"]["anthropic"][0]["access_token"] == CLAUDE  # the rest is kept as it was
    assert read_back(shared_home.parent) == {"anthropic": ["api-key-1"], "openai-api": ["work"]}
    assert [r["label"] for r in json.loads(hermes("auth", "list", "openai", "--json").stdout)] == ["work"]
    missing = hermes("auth", "remove", "openai", "second", "--hermes-agent")
    assert missing.returncode == 1 and "no openai key 'second'" in missing.stderr and "known: work" in missing.stderr


def test_expired_and_malformed_entries_are_one_line_each_and_the_rest_works(
        hermes, hermes_home: Path, fake_model_server: FakeModelServer) -> None:
    path = hermes_agent_home(hermes_home, [("openai-api", WORK, "work")])
    # An expired OAuth login, written by Hermes Agent's own pool code.
    run_release(LATEST, STUB + """
from agent.credential_pool import PooledCredential, load_pool
load_pool("anthropic").add_entry(PooledCredential(
    provider="anthropic", id="exp001", label="old-login", auth_type="oauth", priority=0, source="manual:hermes_pkce",
    access_token="sk-ant-oat01-expired-secret-0000", expires_at="2020-01-01T00:00:00+00:00"))
""", hermes_home)
    data = json.loads(path.read_text())  # entries Hermes Agent would never write, next to its good one
    data["credential_pool"]["openai-api"] += [
        "sk-bare-string-secret",
        {"id": "m2", "label": "number", "access_token": 1234567890123},
        {"id": "m3", "label": "nokey", "source": "manual"},
        {"id": "m4", "label": "prio", "access_token": "sk-prio-secret-0000000", "priority": "high"},
        {"id": "m5", "label": "borrowed", "source": "env:OPENAI_API_KEY"},  # a pointer Hermes Agent writes: silent
    ]
    path.write_text(json.dumps(data, indent=2))
    before = digest(path)
    result = hermes("auth", "list", "--json")
    assert result.returncode == 0, result.stderr
    assert [(r["provider"], r["label"]) for r in json.loads(result.stdout)] == [("openai", "work")]
    lines = warnings(result)
    assert len(lines) == 5, result.stderr
    assert any("credential_pool.anthropic[1] 'old-login': OAuth token expired at 2020-01-01 00:00 UTC; skipped" in x
               for x in lines)
    assert any("credential_pool.openai-api[2] is not an object; skipped" in x for x in lines)
    assert any("credential_pool.openai-api[3] 'number' access_token must be text, not int" in x for x in lines)
    assert any("credential_pool.openai-api[4] 'nokey' has no access_token; skipped (re-add the key with "
               "`hermes auth add openai`)" in x for x in lines)
    assert any("credential_pool.openai-api[5] 'prio': priority must be number, not str" in x for x in lines)
    assert all(str(path) in x for x in lines)
    for secret in ("sk-bare-string-secret", "1234567890123", "sk-prio-secret", "expired-secret", WORK):
        assert secret not in result.stdout + result.stderr
    fake_model_server.reply("fine")
    chat = hermes("chat", "-q", "hi", env=chat_env(fake_model_server))
    assert chat.returncode == 0 and chat.stdout == "fine\n"
    assert len(warnings(chat)) == 4  # the openai pool's lines (the anthropic one is not this provider's)
    assert fake_model_server.requests[0].api_key == WORK
    assert digest(path) == before


@pytest.mark.parametrize("content", [b'{"version": 1, "credential_pool": {"openai-api": [{"id": ',
                                     b'{"version": 1, "providers": {}, "credential_pool": {"x": "caf\xe9"}}'])
def test_a_broken_hermes_agent_file_is_one_line_and_other_keys_still_work(
        hermes, hermes_home: Path, fake_model_server: FakeModelServer, content: bytes) -> None:
    hermes_home.mkdir(parents=True)
    (hermes_home / "auth.json").write_bytes(content)
    env = {"OPENAI_API_KEY": "sk-from-env-00112233445566"}
    result = hermes("auth", "list", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert [r["source"] for r in json.loads(result.stdout)] == ["env"]
    (line,) = warnings(result)
    assert str(hermes_home / "auth.json") in line
    assert ("is not valid JSON (line 1, column" in line) if b"\xe9" not in content else ("is not UTF-8 text (byte 61)" in line)
    assert "its keys are skipped" in line
    fake_model_server.reply("still here")
    chat = hermes("chat", "-q", "hi", env={**chat_env(fake_model_server), **env})
    assert chat.returncode == 0 and chat.stdout == "still here\n"
    assert (hermes_home / "auth.json").read_bytes() == content  # never "repaired" by the kernel
    assert kernel_file(hermes_home)["usage"]  # the kernel's records went to its own file
    # Hermes Agent rewrites its file: the kernel reads the keys again, its own records stay.
    hermes_agent_home(hermes_home, [("openai-api", WORK, "work")])
    rows = json.loads(hermes("auth", "list", "openai", "--json", env=env).stdout)
    assert [r["label"] for r in rows] == ["OPENAI_API_KEY", "work"]


def test_a_broken_file_without_hermes_agent_sections_is_refused_as_before(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True)
    (hermes_home / "auth.json").write_bytes(b"{not json")
    result = hermes("auth", "list")
    assert result.returncode == 1 and "auth.json is not valid JSON (line 1" in result.stderr
    assert not (hermes_home / "hermes-kernel").exists()
    assert (hermes_home / "auth.json").read_bytes() == b"{not json"


def test_hermes_agent_file_without_keys(hermes, hermes_home: Path, fake_model_server: FakeModelServer) -> None:
    hermes_home.mkdir(parents=True)
    run_release(LATEST, STUB + """
from hermes_cli.auth import _save_auth_store
_save_auth_store({"version": 1, "providers": {}})
""", hermes_home)  # what Hermes Agent leaves after a logout
    path = hermes_home / "auth.json"
    before = digest(path)
    listed = hermes("auth", "list")
    assert listed.returncode == 0 and "no keys; add one with `hermes auth add PROVIDER`" in listed.stdout
    assert warnings(listed) == []
    fake_model_server.reply("keyless").reply("now with a key")
    chat = hermes("chat", "-q", "hi", env=chat_env(fake_model_server))  # a base URL may need no key (local servers)
    assert chat.returncode == 0 and fake_model_server.requests[0].api_key == "no-key-required", chat.stderr
    assert hermes("auth", "add", "openai", "--key", KERNEL_KEY).returncode == 0
    chat = hermes("chat", "-q", "hi", env=chat_env(fake_model_server))
    assert chat.returncode == 0 and fake_model_server.requests[-1].api_key == KERNEL_KEY
    assert digest(path) == before
    assert [e["key"] for e in kernel_file(hermes_home)["credentials"]["openai"]] == [KERNEL_KEY]


def _readonly(*args: str) -> subprocess.CompletedProcess[str]:
    """Run hermes so that the home cannot be written, also as root (which ignores file modes)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "running as root needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE for this test"
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    return subprocess.run([*prefix, sys.executable, "-m", "hermes.kernel", *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_a_read_only_home_lists_hermes_agent_keys_and_refuses_to_add(hermes, shared_home: Path) -> None:
    home = shared_home.parent
    before = digest(shared_home)
    os.chmod(home, 0o555)
    try:
        listed = _readonly("auth", "list", "openai", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [r["label"] for r in json.loads(listed.stdout)] == ["work", "second"]
        added = _readonly("auth", "add", "openai", "--key", KERNEL_KEY)
        assert added.returncode == 1 and "Traceback" not in added.stderr
        assert "cannot write" in added.stderr and str(home) in added.stderr and KERNEL_KEY not in added.stderr
        hidden = _readonly("auth", "remove", "openai", "work")
        assert hidden.returncode == 1 and "cannot write" in hidden.stderr
    finally:
        os.chmod(home, 0o700)
    assert digest(shared_home) == before and not (home / "hermes-kernel").exists()
    assert hermes("auth", "add", "openai", "--key", KERNEL_KEY).returncode == 0  # writable again: works
