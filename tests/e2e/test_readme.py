"""The README's commands, run as written where a test can run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_first_screen_holds_the_two_fresh_machine_commands() -> None:
    first_screen = "\n".join(README.splitlines()[:40])
    assert "pip install . && OPENAI_API_KEY=sk-... .venv/bin/hermes chat" in first_screen
    assert "pip install -e '.[test]' && .venv/bin/python -m pytest" in first_screen
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = re.search(r"^(python3 -m venv .venv && .venv/bin/pip install -e .*pytest.*)$", first_screen, re.M)
    assert test_command and test_command.group(1) in ci  # CI runs exactly the README's test command


def test_fake_server_chat_from_the_readme(tmp_path: Path) -> None:
    """``python -m hermes.kernel.testing serve --script ...`` + ``OPENAI_BASE_URL`` gives a tool-using chat."""
    server = subprocess.Popen(
        [sys.executable, "-m", "hermes.kernel.testing", "serve", "--script", str(ROOT / "examples/fake-server/tool-demo.yaml")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        (tmp_path / "NOTES.md").write_text("# notes\n")
        env = {**os.environ, "OPENAI_BASE_URL": base_url + "/v1"}
        result = subprocess.run(
            [sys.executable, "-m", "hermes.kernel", "chat", "-q", "what is in this folder?"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("I searched this folder for Markdown files")
    assert "search_files" in result.stderr and "terminal" in result.stderr
