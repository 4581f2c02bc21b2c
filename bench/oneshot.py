"""CPU time of one ``hermes chat -q`` against ``llm -m MODEL PROMPT``, same fake server, same answer.

Simon Willison's ``llm`` is pip-installed into the benchmark's own virtual
environment (``bench/results/llm-venv``, made on first use) and configured,
through ``extra-openai-models.yaml`` in a private ``LLM_USER_PATH``, for the
same OpenAI-compatible fake server that ``hermes`` talks to. Both stream the
same scripted answer; each command runs ``runs`` times and the median CPU
time (user + system, of the process and its children, from ``wait4``) is
compared. Target: ``hermes chat -q`` at most 0.9 x ``llm``. Bytecode writing is on for both
(``PYTHONDONTWRITEBYTECODE`` dropped), as on a user's machine.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TARGET_RATIO = 0.9
ANSWER = "The capital of France is Paris."
PROMPT = "What is the capital of France?"
MODEL = "bench-model"
VENV = Path(__file__).parent / "results" / "llm-venv"


def _llm_command() -> list[str]:
    """``llm`` in the benchmark's venv, installed with pip the first time."""
    script = VENV / "bin" / "llm"
    if not script.exists():
        if VENV.exists():
            shutil.rmtree(VENV)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "python"), "-m", "pip", "install", "-q", "llm"], check=True)
    return [str(script)]


def _hermes_command() -> list[str]:
    script = Path(sys.executable).parent / "hermes"
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes.kernel"]


def _measure(command: list[str], env: dict[str, str], expect: str) -> float:
    # Popen + wait4 by hand: subprocess would reap the child and lose its rusage.
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or out.decode().strip() != expect:
        raise RuntimeError(f"{command[0]} answered {out.decode()!r} (exit {proc.returncode}; {err.decode()[-400:]})")
    return usage.ru_utime + usage.ru_stime


def run(runs: int | None = None) -> dict[str, Any]:
    from hermes.kernel.testing import FakeModelServer, Reply, Script

    runs = max(3, runs or 9)
    llm = _llm_command()
    with FakeModelServer(Script(default=Reply(text=ANSWER))) as server, tempfile.TemporaryDirectory() as tmp:
        home, llm_home = Path(tmp) / "hermes", Path(tmp) / "llm"
        llm_home.mkdir()
        (llm_home / "extra-openai-models.yaml").write_text(
            f"- model_id: {MODEL}\n  model_name: {MODEL}\n  api_base: \"{server.openai_base_url}\"\n"
            f"  api_key_name: bench\n", encoding="utf-8")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HERMES_", "PYTHONDONTWRITEBYTECODE"))}
        hermes_env = {**base, "HERMES_HOME": str(home), "OPENAI_API_KEY": "sk-bench-0123456789abcdef",
                      "OPENAI_BASE_URL": server.openai_base_url, "HERMES_MODEL__PROVIDER": "openai",
                      "HERMES_MODEL__NAME": MODEL, "HERMES_LOAD_PLUGINS": ""}
        llm_env = {**base, "LLM_USER_PATH": str(llm_home)}
        cases = {
            "hermes chat -q": (_hermes_command() + ["chat", "-q", PROMPT], hermes_env),
            "llm -m MODEL": (llm + ["-m", MODEL, "--key", "sk-bench-0123456789abcdef", "--no-log", PROMPT], llm_env),
        }
        for command, env in cases.values():
            _measure(command, env, ANSWER)  # warm the OS caches and first-run setup (home, llm's logs.db)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):  # interleaved, so machine load affects both alike
            for name, (command, env) in cases.items():
                samples[name].append(_measure(command, env, ANSWER))
    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    ratio = medians["hermes chat -q"] / medians["llm -m MODEL"]
    result = {
        "benchmark": "oneshot",
        "runs": runs,
        "median_cpu_ms": {k: round(v, 1) for k, v in medians.items()},
        "ratio_hermes_vs_llm": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
    }
    print(f"oneshot ({runs} runs each, median CPU time: user + system)")
    for name, ms in medians.items():
        print(f"  {name:<16} {ms:8.1f} ms")
    verdict = "meets" if ratio <= TARGET_RATIO else "misses"
    print(f"  hermes / llm     {ratio:.2f} x ({verdict} target {TARGET_RATIO} x)")
    return result
