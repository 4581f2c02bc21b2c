"""Every documented way of starting the fake server from a shell, run as written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "default: {text: fallback answer}\nreplies:\n  - {text: hi}\n"


def _bash(snippet: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ["PATH"], "OPENAI_API_KEY": "sk-test"}
    return subprocess.run(["bash", "-euo", "pipefail", "-c", snippet], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_readme_fake_server_snippet_runs_and_returns(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"# the project's own fake server.*?\n(.*?)```", readme, re.S)
    assert block, "README lost its fake-server snippet"
    snippet = block.group(1).replace(".venv/bin/", "").replace("examples/", f"{ROOT}/examples/")
    (tmp_path / "NOTES.md").write_text("# notes\n")
    result = _bash(snippet, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("I searched this folder for Markdown files")
    pid = int((tmp_path / "fake.pid").read_text())
    for _ in range(100):
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid), "kill from the snippet did not stop the server"


def test_docstring_and_docs_snippet_command_substitution_returns(tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    snippet = (
        "url=$(python -m hermes.kernel.testing serve --detach --pid-file fake.pid --script script.yaml)\n"
        'OPENAI_BASE_URL=$url/v1 hermes chat -q hi\nkill "$(cat fake.pid)"\n'
    )
    for text in ((ROOT / "kernel" / "testing" / "__main__.py").read_text(), (ROOT / "docs" / "providers.md").read_text()):
        assert "serve --detach --pid-file fake.pid --script" in text and 'kill "$(cat fake.pid)"' in text
    started = time.monotonic()
    result = _bash(snippet, tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hi\n" and time.monotonic() - started < 60


def test_url_file_is_written_once_listening(tmp_path: Path) -> None:
    url_file = tmp_path / "url.txt"
    server = subprocess.Popen(
        [sys.executable, "-m", "hermes.kernel.testing", "serve", "--url-file", str(url_file)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not url_file.exists():
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.02)
        url = url_file.read_text().strip()
        assert server.stdout is not None and server.stdout.readline().strip() == url
        with urllib.request.urlopen(url + "/v1/models", timeout=10) as response:
            assert response.status == 200
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=10) == 0


@pytest.mark.parametrize("args", [["--pid-file", "x.pid"], ["--script", "missing.yaml"]])
def test_bad_serve_arguments_are_one_line(tmp_path: Path, args: list[str]) -> None:
    result = subprocess.run([sys.executable, "-m", "hermes.kernel.testing", "serve", *args],
                            cwd=tmp_path, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert result.returncode == 2 and result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
