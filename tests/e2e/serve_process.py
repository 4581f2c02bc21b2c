"""``hermes serve`` in a subprocess for end-to-end tests: started on a free port, stopped with SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hermes.kernel.testing import FakeModelServer

__all__ = ["ServeProcess", "db_rows", "serve_env", "wait_for"]


def serve_env(server: FakeModelServer, home: Path, **settings: Any) -> dict[str, str]:
    """The environment of a server whose model is the fake server; ``settings`` become ``HERMES_SERVE__*``."""
    env = {
        **os.environ,
        "HERMES_HOME": str(home),
        "OPENAI_API_KEY": "sk-test-key-0123456789abcdef",
        "OPENAI_BASE_URL": server.openai_base_url,
        "HERMES_MODEL__PROVIDER": "openai",
        "HERMES_MODEL__NAME": "test-model",
        "HERMES_RETRIES__BASE_DELAY": "0.01",
        "HERMES_MODEL__TIMEOUT": "20",
    }
    for key, value in settings.items():
        env[f"HERMES_SERVE__{key.upper()}"] = str(value)
    return env


class ServeProcess:
    """A running ``hermes serve``; ``url`` is its base URL and ``stderr`` what it printed so far."""

    def __init__(self, env: dict[str, str], *args: str, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hermes.kernel", "serve", "--port", "0", *args],
            env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self._lines: list[str] = []
        self._ready = threading.Event()
        self.port = 0
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(60) or not self.port:
            self.proc.kill()
            raise RuntimeError(f"hermes serve did not start: {self.stderr}")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._lines.append(line)
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if match:
                self.port = int(match.group(1))
                self._ready.set()
        self._ready.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def stderr(self) -> str:
        return "".join(self._lines)

    def client(self, api_key: str = "none", **options: Any) -> Any:
        from openai import OpenAI

        return OpenAI(base_url=self.url + "/v1", api_key=api_key, max_retries=options.pop("max_retries", 0), **options)

    def terminate(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        time.sleep(0.05)  # let the reader thread take the last lines
        return code

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def db_rows(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "state.db") as conn:
        return conn.execute(sql, params).fetchall()


def wait_for(check: Any, timeout: float = 15.0, interval: float = 0.1) -> Any:
    """Poll ``check`` until it returns something truthy; returns that value (or the last falsy one)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)
