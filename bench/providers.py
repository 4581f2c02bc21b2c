"""Per-request overhead of hermes's provider layer against a raw SDK call.

A fake server (``python -m hermes.kernel.testing serve``, its own process so
it does not share our GIL) answers every request with the same reply. For
each provider (openai, anthropic) and mode (JSON, SSE) the benchmark times,
interleaved round by round:

* ``raw``: the official SDK client called directly (retries off);
* ``provider``: our ``ModelProvider.complete`` / ``stream`` (request
  translation, response and usage normalisation);
* ``client``: our ``ModelClient`` as the agent loop uses it (plus credential
  pool, retry bookkeeping and pricing).

Reported: the median wall time per request and each layer's ratio to raw.
Target: ``provider`` at most 1.10 x raw.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET_RATIO = 1.10
KEY = "sk-bench-0000000000000000"
REPLY = ("The quick brown fox jumps over the lazy dog. " * 6).strip()
MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant. " * 20},
    {"role": "user", "content": "Tell me about foxes."},
    {"role": "assistant", "content": "Foxes are small omnivores."},
    {"role": "user", "content": "And dogs?"},
]


def _start_server(folder: Path) -> tuple[subprocess.Popen[str], str]:
    script = folder / "script.json"
    script.write_text(json.dumps({"default": {"text": REPLY, "usage": {"input_tokens": 200, "output_tokens": 60}}}))
    proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel.testing", "serve", "--script", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _cases(base_url: str, home: Path) -> dict[tuple[str, str], dict[str, Callable[[], Any]]]:
    import anthropic
    import openai

    from hermes.kernel import ModelClient, ModelRequest, RetryPolicy
    from hermes.kernel.credentials import CredentialPool
    from hermes.kernel.home import HermesHome
    from hermes.plugins.anthropic_provider import AnthropicProvider
    from hermes.plugins.credential_strategies import FillFirst
    from hermes.plugins.openai_provider import OpenAIProvider

    oa_raw = openai.OpenAI(api_key=KEY, base_url=base_url + "/v1", max_retries=0, timeout=30)
    an_raw = anthropic.Anthropic(api_key=KEY, base_url=base_url, max_retries=0, timeout=30)
    oa = OpenAIProvider(api_key=KEY, base_url=base_url + "/v1", timeout=30)
    an = AnthropicProvider(api_key=KEY, base_url=base_url, timeout=30, options={"prompt_caching": False})
    hermes_home = HermesHome(home, "default")

    def client(name: str, cls: type, url: str) -> ModelClient:
        pool = CredentialPool(name, home=hermes_home, strategy=FillFirst(), config_keys=[KEY], environ={})
        return ModelClient(name, cls, pool, base_url=url, timeout=30, retry=RetryPolicy(),
                           options={"prompt_caching": False})

    oa_client = client("openai", OpenAIProvider, base_url + "/v1")
    an_client = client("anthropic", AnthropicProvider, base_url)
    oa_req = ModelRequest(model="gpt-4o", messages=MESSAGES, max_tokens=256)
    an_req = ModelRequest(model="claude-sonnet-4-6", messages=MESSAGES, max_tokens=256)
    an_system, an_messages = MESSAGES[0]["content"], MESSAGES[1:]

    def oa_raw_json() -> str:
        return oa_raw.chat.completions.create(model="gpt-4o", messages=MESSAGES, max_tokens=256).choices[0].message.content

    def oa_raw_sse() -> str:
        parts = []
        for chunk in oa_raw.chat.completions.create(model="gpt-4o", messages=MESSAGES, max_tokens=256, stream=True,
                                                    stream_options={"include_usage": True}):
            if chunk.choices and chunk.choices[0].delta.content:
                parts.append(chunk.choices[0].delta.content)
        return "".join(parts)

    def an_raw_json() -> str:
        return an_raw.messages.create(model="claude-sonnet-4-6", max_tokens=256, system=an_system,
                                      messages=an_messages).content[0].text

    def an_raw_sse() -> str:
        parts = []
        for event in an_raw.messages.create(model="claude-sonnet-4-6", max_tokens=256, system=an_system,
                                            messages=an_messages, stream=True):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                parts.append(event.delta.text)
        return "".join(parts)

    def drain(items: Any) -> Any:
        last = None
        for last in items:
            pass
        return last

    return {
        ("openai", "json"): {"raw": oa_raw_json, "provider": lambda: oa.complete(oa_req),
                             "client": lambda: oa_client.complete(oa_req)},
        ("openai", "sse"): {"raw": oa_raw_sse, "provider": lambda: drain(oa.stream(oa_req)),
                            "client": lambda: drain(oa_client.stream(oa_req))},
        ("anthropic", "json"): {"raw": an_raw_json, "provider": lambda: an.complete(an_req),
                                "client": lambda: an_client.complete(an_req)},
        ("anthropic", "sse"): {"raw": an_raw_sse, "provider": lambda: drain(an.stream(an_req)),
                               "client": lambda: drain(an_client.stream(an_req))},
    }


def run(runs: int | None = None) -> dict[str, Any]:
    runs = max(20, runs or 300)
    rounds = 10
    per_round = max(2, runs // rounds)
    results: dict[str, Any] = {"benchmark": "providers", "runs": per_round * rounds, "target_ratio": TARGET_RATIO,
                               "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        proc, base_url = _start_server(Path(tmp))
        try:
            cases = _cases(base_url, Path(tmp) / "home")
            for (provider, mode), layers in cases.items():
                for fn in layers.values():  # warm connections, imports and caches
                    for _ in range(5):
                        fn()
                times: dict[str, list[float]] = {layer: [] for layer in layers}
                order = list(layers.items())
                for index in range(rounds):  # interleaved and rotated, so drift hits every layer alike
                    for layer, fn in order[index % len(order):] + order[:index % len(order)]:
                        for _ in range(per_round):
                            start = time.perf_counter()
                            fn()
                            times[layer].append(time.perf_counter() - start)
                medians = {layer: statistics.median(t) * 1000 for layer, t in times.items()}
                results["cases"][f"{provider}/{mode}"] = {
                    "median_ms": {k: round(v, 3) for k, v in medians.items()},
                    "provider_ratio": round(medians["provider"] / medians["raw"], 3),
                    "client_ratio": round(medians["client"] / medians["raw"], 3),
                }
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"providers ({results['runs']} requests per layer, median wall time per request)")
    print(f"  {'case':<16} {'raw SDK':>9} {'provider':>9} {'client':>9} {'provider/raw':>13} {'client/raw':>11}")
    for case, row in results["cases"].items():
        ms = row["median_ms"]
        print(f"  {case:<16} {ms['raw']:7.3f}ms {ms['provider']:7.3f}ms {ms['client']:7.3f}ms "
              f"{row['provider_ratio']:12.3f}x {row['client_ratio']:10.3f}x")
    worst = max(row["provider_ratio"] for row in results["cases"].values())
    results["worst_provider_ratio"] = worst
    verdict = "meets" if worst <= TARGET_RATIO else "misses"
    print(f"  worst provider/raw {worst:.3f} x ({verdict} target {TARGET_RATIO} x)")
    return results
