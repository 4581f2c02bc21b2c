"""Startup cost of ``hermes --help`` against ``import typer`` and an empty interpreter.

Each command runs as a fresh process; the median wall time of ``runs``
repetitions is reported, with ``hermes --help`` as a ratio of the other two.
Target: ``hermes --help`` at most 1.2 x ``import typer``. Bytecode writing is on (as on a
user's machine, where pip compiles it), whatever ``PYTHONDONTWRITEBYTECODE`` says here:
otherwise every run would recompile this checkout's sources and measure the compiler.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 1.2


def _hermes_command() -> list[str]:
    script = Path(sys.executable).parent / "hermes"
    if script.exists():
        return [str(script)]
    found = shutil.which("hermes")
    return [found] if found else [sys.executable, "-m", "hermes.kernel"]


def _median_ms(command: list[str], runs: int, env: dict[str, str]) -> float:
    subprocess.run(command, stdout=subprocess.DEVNULL, env=env, check=True)  # warm the OS caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, env=env, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def run(runs: int | None = None) -> dict[str, Any]:
    runs = max(5, runs or 21)
    with tempfile.TemporaryDirectory() as home:
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "HERMES_HOME": home}
        cases = {
            "hermes --help": _hermes_command() + ["--help"],
            "python -c 'import typer'": [sys.executable, "-c", "import typer"],
            "python -c pass": [sys.executable, "-c", "pass"],
        }
        medians = {name: _median_ms(cmd, runs, env) for name, cmd in cases.items()}
    hermes, typer_ms, bare = medians.values()
    result = {
        "benchmark": "startup",
        "runs": runs,
        "median_ms": {k: round(v, 2) for k, v in medians.items()},
        "ratio_vs_import_typer": round(hermes / typer_ms, 3),
        "ratio_vs_python_pass": round(hermes / bare, 3),
        "target_ratio_vs_import_typer": TARGET_RATIO,
    }
    print(f"startup ({runs} runs each, median wall time)")
    for name, ms in medians.items():
        print(f"  {name:<28} {ms:8.1f} ms")
    verdict = "meets" if result["ratio_vs_import_typer"] <= TARGET_RATIO else "misses"
    print(f"  hermes --help / import typer  {result['ratio_vs_import_typer']:.2f} x ({verdict} target {TARGET_RATIO} x)")
    print(f"  hermes --help / python pass   {result['ratio_vs_python_pass']:.2f} x")
    return result
