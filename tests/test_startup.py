"""``hermes --help`` stays light: no provider SDK or sqlite_utils import on that path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("openai", "anthropic", "sqlite_utils", "stevedore", "rich", "starlette", "uvicorn", "mcp", "psycopg", "psycopg_pool")
# Not heavy, but more than --help needs: pluggy comes with the first hook listener
# (kernel/hook_manager.py), logging with the first record (kernel/lazy_log.py).
HEAVY += ("pluggy", "logging")

PROBE = """
import json, sys
from hermes.kernel.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def test_help_imports_nothing_heavy() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "Usage: hermes" in result.stdout
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


FRONT_END_PROBE = """
import json, sys
from hermes.kernel.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("hermes.plugins", "hermes.compat", "hermes.kernel.store")))))
"""


def test_help_imports_only_the_light_module_of_each_front_end() -> None:
    """Front-ends are entry points: --help imports each one's typer module, never what it runs."""
    result = subprocess.run([sys.executable, "-c", FRONT_END_PROBE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "\n  serve " in result.stdout and "\n  import " in result.stdout
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [
        "hermes.compat", "hermes.compat.hermes", "hermes.compat.hermes.import_cmd",
        "hermes.plugins", "hermes.plugins.serve", "hermes.plugins.serve.cli",
    ]  # fmt: skip


def test_importing_the_kernel_imports_nothing_heavy() -> None:
    probe = f"import json, sys, hermes.kernel; print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert json.loads(result.stdout) == []


def test_startup_benchmark_reports_ratios(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-m", "bench", "startup", "--runs", "5", "--out", str(tmp_path)],
        capture_output=True, text=True, cwd=root, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "hermes --help / import typer" in result.stdout
    data = json.loads((tmp_path / "startup.json").read_text())
    assert data["runs"] == 5
    assert set(data["median_ms"]) == {"hermes --help", "python -c 'import typer'", "python -c pass"}
    assert data["ratio_vs_import_typer"] > 0  # a number, not a verdict: speed is judged in bench/
