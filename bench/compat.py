"""What running a Hermes-format provider through the compatibility layer costs per call.

A provider folder in a temporary home is loaded through ``hermes.compat.hermes``;
each call through the adapter (signature fitting, stand-in modules swapped into
``sys.modules`` and out again) is timed against the same call made on the
provider directly. Two calls: ``prefetch`` (a plain method) and the
``on_turn_start`` hook as the plugin host delivers it. Target: at most 50 µs
per call, so a turn's dozen provider calls cost well under a millisecond.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_US = 50.0

PROVIDER = '''
from agent.memory_provider import MemoryProvider


class Bench(MemoryProvider):
    name = "bench"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.turns = 0

    def get_tool_schemas(self):
        return []

    def prefetch(self, query, *, session_id=""):
        return ""

    def on_turn_start(self, turn_number, message, **kwargs):
        self.turns = turn_number
'''


def _per_call(func: Any, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        func()
    return (time.perf_counter() - started) / calls * 1e6


def run(runs: int | None = None, calls: int = 5000) -> dict[str, Any]:
    from hermes.compat.hermes import load_folder_provider
    from hermes.kernel import HermesHome, PluginHost

    runs = max(3, runs or 7)
    with tempfile.TemporaryDirectory() as tmp:
        home = HermesHome(root=Path(tmp), profile="default")
        folder = home.plugins_dir / "bench"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(PROVIDER, encoding="utf-8")
        adapter = load_folder_provider(folder)(home=home)
        adapter.initialize("s1", hermes_home=home, platform="cli", agent_context="primary")
        host = PluginHost(load_plugins="")
        host.register(adapter, name="memory:bench")
        inner = adapter.inner
        figures: dict[str, list[float]] = {k: [] for k in ("direct_prefetch", "prefetch", "direct_hook", "hook")}
        for _ in range(runs):  # interleaved, so drift hits both alike
            figures["direct_prefetch"].append(_per_call(lambda: inner.prefetch("q", session_id="s1"), calls))
            figures["prefetch"].append(_per_call(lambda: adapter.prefetch("q", "s1"), calls))
            figures["direct_hook"].append(_per_call(lambda: inner.on_turn_start(1, "m", platform="cli"), calls))
            figures["hook"].append(
                _per_call(lambda: host.call("on_turn_start", session_id="s1", turn=1, message="m"), calls)
            )
    median = {k: statistics.median(v) for k, v in figures.items()}
    result = {
        "benchmark": "compat",
        "runs": runs,
        "calls": calls,
        "prefetch_us": round(median["prefetch"], 2),
        "direct_prefetch_us": round(median["direct_prefetch"], 2),
        "prefetch_overhead_us": round(median["prefetch"] - median["direct_prefetch"], 2),
        "hook_us": round(median["hook"], 2),
        "direct_hook_us": round(median["direct_hook"], 2),
        "hook_overhead_us": round(median["hook"] - median["direct_hook"], 2),
        "target_overhead_us": TARGET_US,
    }
    print(f"compat ({runs} runs of {calls} calls, a Hermes provider folder through hermes.compat.hermes)")
    for name in ("prefetch", "hook"):
        overhead = result[f"{name}_overhead_us"]
        verdict = "meets" if overhead <= TARGET_US else "misses"
        print(f"  {name:9} {result[f'{name}_us']:8.2f} µs through the layer, {result[f'direct_{name}_us']:6.2f} µs direct:"
              f" overhead {overhead:.2f} µs ({verdict} target {TARGET_US:.0f} µs)")  # fmt: skip
    return result
