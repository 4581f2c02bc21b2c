"""hermes.compat.hermes.auth_store: Hermes Agent's auth.json as data, and the kernel's cheap detection."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.compat.hermes.auth_store import (
    describe_hermes_auth,
    hermes_pool_names,
    hermes_strategy,
    read_hermes_auth,
    remove_hermes_keys,
)
from hermes.kernel.credentials import AuthStore
from hermes.kernel.credentials.sources import auth_kind, kernel_auth_path, strategy_name_for
from hermes.kernel.errors import HermesError

A, B = "sk-first-aaaaaaaaaaaaaaaaaaaa", "sk-second-bbbbbbbbbbbbbbbbbbb"
KERNEL_CREDENTIALS = Path(__file__).resolve().parents[2] / "kernel" / "credentials"


def entry(key: str | None, label: str, **fields: object) -> dict:
    data = {"id": label[:6], "label": label, "auth_type": "api_key", "priority": 0, "source": "manual", **fields}
    if key is not None:
        data["access_token"] = key
    return data


def write(path: Path, pool: dict, **top: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "providers": {}, "credential_pool": pool, **top}), encoding="utf-8")
    return path


def test_keys_follow_hermes_agents_priority_and_pool_names_map_onto_kernel_providers(tmp_path: Path) -> None:
    path = write(tmp_path / "auth.json", {
        "openai-api": [entry(B, "second", priority=1), entry(A, "first", priority=0)],
        "openrouter": [entry("sk-or-cccccccccccccccc", "router")],
    })
    auth = read_hermes_auth(path)
    assert [(k.provider, k.pool, k.label) for k in auth.keys_for("openai")] == [
        ("openai", "openai-api", "first"), ("openai", "openai-api", "second")]
    assert [k.label for k in auth.keys_for("openrouter")] == ["router"]  # same name, a plugin may serve it
    assert auth.problems == []
    assert A not in repr(auth.keys)  # keys never show in a repr
    assert hermes_pool_names("openai") == ["openai", "openai-api"]


@pytest.mark.parametrize("bad,line", [
    ({"id": "x", "label": "w", "access_token": ["sk"]}, "credential_pool.openai-api[1] 'w' access_token must be text, not list"),
    ({"id": "x", "label": "w", "access_token": ""}, "credential_pool.openai-api[1] 'w' has an empty access_token"),
    ({"id": "x", "label": "w", "access_token": "sk a b"}, "'w': access_token contains spaces or line breaks"),
    ({"id": 7, "label": "w", "access_token": A}, "'w': id must be text, not int"),
    ({"id": "x", "label": "w", "access_token": A, "priority": True}, "'w': priority must be number, not bool"),
    ({"id": "x", "label": "w", "access_token": A, "last_status": "dead"}, "'w' was marked dead"),
    ({"id": "x", "label": "w", "access_token": A, "auth_type": "oauth", "expires_at_ms": 1_000},
     "'w': OAuth token expired at 1970-01-01 00:00 UTC; skipped (log in again with Hermes Agent"),
    ({"id": "x", "label": "w", "access_token": A, "auth_type": "oauth", "expires_at": "2999-01-01T00:00:00Z"},
     "'w' is an OAuth login, and hermes-kernel uses API keys only"),
    (42, "credential_pool.openai-api[1] is not an object; skipped"),
])
def test_each_bad_entry_is_one_line_without_its_secret(tmp_path: Path, bad: object, line: str) -> None:
    path = write(tmp_path / "auth.json", {"openai-api": [bad, entry(B, "good")]})
    auth = read_hermes_auth(path)
    assert [k.label for k in auth.keys] == ["good"]  # the rest is used
    (problem,) = auth.problems_for("openai")
    assert problem.startswith(f"{path}: ") and line in problem and "skipped" in problem
    assert A not in problem and "sk a b" not in problem
    assert auth.problems_for("anthropic") == []  # lines belong to their provider


def test_borrowed_entries_are_skipped_without_a_word(tmp_path: Path) -> None:
    path = write(tmp_path / "auth.json", {"openai-api": [{"id": "e", "label": "OPENAI_API_KEY", "source": "env:OPENAI_API_KEY"}]})
    auth = read_hermes_auth(path)
    assert auth.keys == [] and auth.problems == [] and auth.other_pools == {"openai-api": 1}


@pytest.mark.parametrize("content,line", [
    (b'{"credential_pool": ', " is not valid JSON (line 1, column 21: Expecting value); its keys are skipped "
                             "(fix it, or let Hermes Agent rewrite it)"),
    (b'{"credential_pool": {"x": "\xff"}}', " is not UTF-8 text (byte 27); its keys are skipped "
                                          "(re-save it as UTF-8, or let Hermes Agent rewrite it)"),
    (b'[1]', " must hold a JSON object; its keys are skipped (let Hermes Agent rewrite it, or move it away)"),
    (b'{"credential_pool": []}', ": credential_pool must be an object, not list; its keys are skipped "
                                 "(let Hermes Agent rewrite it)"),
])
def test_a_broken_file_is_one_line(tmp_path: Path, content: bytes, line: str) -> None:
    path = tmp_path / "auth.json"
    path.write_bytes(content)
    auth = read_hermes_auth(path)
    assert auth.keys == [] and auth.problems_for("openai") == [f"{path}{line}"]


def test_a_newer_version_is_read_and_said(tmp_path: Path) -> None:
    auth = read_hermes_auth(write(tmp_path / "auth.json", {"anthropic": [entry(A, "a")]}, version=2))
    assert [k.label for k in auth.keys] == ["a"]
    assert auth.problems_for("anthropic") == [f"{tmp_path / 'auth.json'} is version 2, newer than 1 which "
                                              "hermes-kernel knows; its pool is read as version 1"]


@pytest.mark.parametrize("strategies,expected", [
    ({"openai-api": " Round_Robin "}, "round_robin"),
    ({"openai-api": "least_used"}, "least_used"),
    ({"openai-api": "fastest"}, "fill_first"),  # Hermes Agent's own fallback for a name it does not know
    ({"anthropic": "random"}, None),
    ({}, None),
    (None, None),
])
def test_hermes_agent_strategies_map_onto_the_kernels(strategies: object, expected: str | None) -> None:
    assert hermes_strategy("openai", strategies) == expected


def test_the_kernel_takes_hermes_agents_strategy_only_on_its_home(tmp_path: Path) -> None:
    assert strategy_name_for("openai", {"openai-api": "random"}, tmp_path) == "fill_first"  # kernel-only home
    write(tmp_path / "auth.json", {})
    assert strategy_name_for("openai", {"openai-api": "random"}, tmp_path) == "random"
    assert strategy_name_for("openai", {"openai-api": "random", "openai": "least_used"}, tmp_path) == "least_used"
    assert strategy_name_for("anthropic", {"anthropic": " Random"}, tmp_path) == "random"  # one name, both programs
    assert strategy_name_for("anthropic", {"anthropic": "my_plugin"}, tmp_path) == "my_plugin"  # a kernel plugin
    assert strategy_name_for("anthropic", {"anthropic": "Random"}, tmp_path / "kernel-only") == "Random"  # as before


def test_detection(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    assert auth_kind(path) == "missing" and kernel_auth_path(tmp_path) == path
    path.write_text(json.dumps({"credentials": {"openai": [{"key": A, "label": "providers"}]}}))
    assert auth_kind(path) == "kernel"  # a marker word inside a value does not make it Hermes Agent's
    path.write_bytes(b"{broken")
    assert auth_kind(path) == "kernel" and kernel_auth_path(tmp_path) == path  # the kernel's, which says what is wrong
    path.write_bytes(b'{"providers": {')
    assert auth_kind(path) == "hermes-agent" and kernel_auth_path(tmp_path) == tmp_path / "hermes-kernel" / "auth.json"
    write(path, {})
    assert auth_kind(path) == "hermes-agent"
    path.unlink()  # once the kernel has its own folder, it keeps using it
    (tmp_path / "hermes-kernel").mkdir()
    (tmp_path / "hermes-kernel" / "auth.json").write_text("{}")
    assert kernel_auth_path(tmp_path) == tmp_path / "hermes-kernel" / "auth.json"


def test_the_kernels_store_never_takes_hermes_agents_file_for_its_own(tmp_path: Path) -> None:
    path = write(tmp_path / "auth.json", {"openai-api": [entry(A, "a")]})
    before = path.read_bytes()
    assert AuthStore(path).view()["credentials"] == {}  # read as a file with no kernel records (doctor does)
    with pytest.raises(HermesError, match="is Hermes Agent's auth.json, which hermes-kernel only reads"):
        AuthStore(path).update(lambda data: data["state"].clear())
    assert path.read_bytes() == before


def test_remove_changes_only_the_named_entries(tmp_path: Path) -> None:
    path = write(tmp_path / "auth.json", {"openai-api": [entry(A, "a"), entry(B, "b")], "anthropic": [entry(A, "c")]},
                 active_provider="nous")
    assert remove_hermes_keys(path, "openai-api", ["a"]) == 1
    data = json.loads(path.read_text())
    assert [e["label"] for e in data["credential_pool"]["openai-api"]] == ["b"]
    assert data["credential_pool"]["anthropic"] == [entry(A, "c")] and data["active_provider"] == "nous"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert remove_hermes_keys(path, "openai-api", ["zz"]) == 0


def test_describe_for_doctor(tmp_path: Path) -> None:
    assert describe_hermes_auth(tmp_path) == []
    (tmp_path / "auth.json").write_text(json.dumps({"credentials": {}}))
    assert describe_hermes_auth(tmp_path) == []  # the kernel's own file
    write(tmp_path / "auth.json", {"openai-api": [entry(A, "a"), {"label": "x"}], "anthropic": [entry(B, "b")],
                                   "nous": [entry(A, "n", auth_type="oauth")]})
    lines = describe_hermes_auth(tmp_path)
    assert lines[:2] == [
        f"Hermes Agent's {tmp_path / 'auth.json'} gives 1 anthropic, 1 openai API key(s); read only, never written "
        "by hermes-kernel",
        "Hermes Agent pools without usable API keys (OAuth logins or unknown providers): nous"]
    assert len(lines) == 4 and "credential_pool.openai-api[2] 'x' has no access_token" in lines[2]
    assert A not in "\n".join(lines) and B not in "\n".join(lines)


def _imported_after_auth_list(home: Path) -> bool:
    code = ("import sys\nfrom hermes.kernel.cli import main\n"
            "try:\n    main(['auth', 'list'])\nexcept SystemExit:\n    pass\n"
            "print('hermes.compat.hermes.auth_store' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"HERMES_HOME": str(home), "HERMES_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1] == "True"


def test_a_kernel_only_home_never_imports_the_compat_module(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert _imported_after_auth_list(home) is False  # no auth.json
    AuthStore(home / "auth.json").add("openai", A, "k", 0)
    assert _imported_after_auth_list(home) is False  # the kernel's own auth.json
    (home / "auth.json").unlink()
    write(home / "auth.json", {"openai-api": [entry(A, "a")]})
    assert _imported_after_auth_list(home) is True  # Hermes Agent's file: read through the compat module


def test_kernel_credentials_import_nothing_of_the_providers_package() -> None:
    # The failure reasons live in kernel/failures.py, below both; only the compat arrow is left.
    found = set()
    for module in sorted(KERNEL_CREDENTIALS.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and "providers" in (node.module or ""):
                found.add((module.name, node.module))
            if isinstance(node, ast.ImportFrom) and "compat" in (node.module or ""):
                found.add((module.name, node.module))
    assert found == {("sources.py", "hermes.compat.hermes.auth_store")}
