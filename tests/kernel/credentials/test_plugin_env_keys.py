"""A plugin provider's own ``env_key`` is the variable every command reads and names; without
one, it is ``<NAME>_API_KEY`` with dashes made underscores."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import FakeDistributions

Hermes = Callable[..., subprocess.CompletedProcess[str]]
MODULE = """\
from hermes.kernel.testing import ScriptedProvider

class Acme(ScriptedProvider):
    env_key = "ACME_TOKEN"

class Plain(ScriptedProvider):
    pass
"""


@pytest.fixture
def home(fake_dists: FakeDistributions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "acme-providers")
    providers = {"acme": "acme_providers:Acme", "acme-plain": "acme_providers:Plain"}
    fake_dists.add("acme-providers", {"hermes.model_providers": providers}, {"acme_providers": MODULE})
    return tmp_path / "home"


def test_auth_list_reads_the_plugins_own_variable(hermes: Hermes, home: Path) -> None:
    env = {"HERMES_HOME": str(home), "ACME_TOKEN": "tok-acme-1234567890abcdef", "ACME_API_KEY": "tok-wrong-1234567890abcd"}
    listed = hermes("auth", "list", "acme", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [(row["provider"], row["label"], row["source"]) for row in json.loads(listed.stdout)] == [("acme", "ACME_TOKEN", "env")]


@pytest.mark.parametrize(("provider", "variable"), [("acme", "ACME_TOKEN"), ("acme-plain", "ACME_PLAIN_API_KEY")])
def test_a_missing_key_names_the_variable_to_set(hermes: Hermes, home: Path, provider: str, variable: str) -> None:
    env = {"HERMES_HOME": str(home), "HERMES_MODEL__PROVIDER": provider, "HERMES_MODEL__NAME": "m1"}
    chat = hermes("chat", "-q", "hi", env=env)
    assert chat.returncode == 1
    assert chat.stderr.strip().splitlines() == [
        f"error: no API key for {provider}: set {variable} (or `hermes config set {variable} KEY`), "
        f"or run `hermes auth add {provider}`"
    ]
    doctor = hermes("doctor", env=env)
    assert f"no API key for {provider}: set {variable} (`hermes config set {variable} KEY`) or run `hermes auth add {provider}`" in doctor.stdout
