"""Model metadata: the resolution chain (config, endpoint, catalog, probe), its cache and `hermes models`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hermes.kernel.context_windows import context_length_for, resolve_model
from hermes.kernel.home import HermesHome
from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401


def test_catalog_covers_the_families_the_old_table_got_wrong() -> None:
    assert context_length_for("qwen3-coder-480b-a35b-instruct") == 262_144  # not 32,768
    assert context_length_for("google/gemini-2.5-flash") == 1_048_576  # not the 128K default
    assert context_length_for("claude-sonnet-4-5[1m]") == 1_000_000 and context_length_for("claude-sonnet-4-5") == 200_000
    assert context_length_for("deepseek-chat") == 128_000 and context_length_for("llama-3.3-70b") == 131_072
    assert context_length_for("codestral-latest") == 256_000 and context_length_for("gpt-4.1-mini") == 1_047_576
    assert context_length_for("anything", configured=5000) == 5000


def test_chain_order_config_endpoint_catalog_probe(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    home = HermesHome(tmp_path / "home", "default")
    fake_model_server.models = [
        {"id": "qwen3-coder", "object": "model", "max_model_len": 40_960},
        {"id": "vendor/mixed", "context_length": 65_536, "top_provider": {"max_completion_tokens": 4_096},
         "pricing": {"prompt": "0.000001", "completion": "0.000002"}},
    ]
    url = fake_model_server.openai_base_url
    assert resolve_model("qwen3-coder", configured=9000, base_url=url, home=home).source == "config"
    served = resolve_model("qwen3-coder", base_url=url, home=home)
    assert (served.context_length, served.source) == (40_960, "endpoint")  # what the server runs beats the catalog
    mixed = resolve_model("vendor/mixed", base_url=url, home=home)
    assert (mixed.context_length, mixed.max_output, mixed.pricing["prompt"]) == (65_536, 4_096, "0.000001")
    assert resolve_model("gpt-4o", base_url=url, home=home).source == "catalog"
    probe = resolve_model("totally-new-model", base_url=url, home=home)
    assert (probe.context_length, probe.source) == (128_000, "probe")
    cache = json.loads((home.path / "cache" / "models.json").read_text())
    assert cache[f"{url}|qwen3-coder"]["context_length"] == 40_960


def test_endpoint_answers_are_cached_with_a_ttl(tmp_path: Path) -> None:
    home = HermesHome(tmp_path / "home", "default")
    calls: list[str] = []

    def fetch(url, timeout, body, headers):
        calls.append(url)
        if url.endswith("/api/show"):
            return {"model_info": {"llama.context_length": 8192}}  # Ollama
        raise OSError("no model list")

    first = resolve_model("my-local", base_url="http://127.0.0.1:11434/v1", home=home, fetch=fetch)
    assert (first.context_length, first.source) == (8192, "endpoint") and calls[-1].endswith("/api/show")
    asked = len(calls)
    assert resolve_model("my-local", base_url="http://127.0.0.1:11434/v1", home=home, fetch=fetch).context_length == 8192
    assert len(calls) == asked  # served from HERMES_HOME/cache
    resolve_model("my-local", base_url="http://127.0.0.1:11434/v1", home=home, fetch=fetch, ttl=0)
    assert len(calls) > asked  # expired


def test_models_cli_says_what_is_known_and_from_where(fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    fake_model_server.models = [{"id": "served-model", "max_model_len": 32_000}]
    env = {**os.environ, "OPENAI_BASE_URL": fake_model_server.openai_base_url, "HERMES_MODEL__NAME": "served-model"}

    def hermes(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hermes.kernel", "models", *args], capture_output=True, text=True,
                              env=env, timeout=60)

    shown = hermes("show", "served-model", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["context_length"] == 32_000 and json.loads(shown.stdout)["source"] == "endpoint"
    listed = json.loads(hermes("list", "--json", "--catalog").stdout)
    assert listed["catalog_date"] and listed["models"][0]["model"] == "served-model"
    assert any(m["model"] == "gemini-2.5" and m["source"] == "catalog" for m in listed["models"])
    text = hermes("show", "claude-opus-4-1")
    assert text.returncode == 0 and "200,000" in text.stdout and "catalog" in text.stdout
