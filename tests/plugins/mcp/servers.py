"""Starting the demo MCP server for tests: its stdio config and a Streamable HTTP process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

__all__ = ["DEMO", "alive", "http_demo", "pids", "stdio_server", "write_config"]

DEMO = Path(__file__).with_name("demo_server.py")


def stdio_server(marks: Path, **extra: Any) -> dict[str, Any]:
    """A ``mcp.servers`` entry running the demo server over stdio."""
    return {"command": sys.executable, "args": [str(DEMO), "stdio"], "env": {"DEMO_MARK_DIR": str(marks)}, **extra}


def write_config(home: Path, servers: dict[str, Any], **mcp: Any) -> None:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    data = data or {}
    data["mcp"] = {"servers": servers, **mcp}
    path.write_text(yaml.safe_dump(data))


def pids(marks: Path) -> list[int]:
    """PIDs of every demo server process started with this marker folder."""
    return sorted(int(p.name.split("-", 1)[1]) for p in marks.glob("pid-*")) if marks.exists() else []


def alive(pid: int) -> bool:
    """True while ``pid`` is a running process (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(predicate: Any, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


@contextmanager
def http_demo(tmp: Path, marks: Path, transport: str = "http") -> Iterator[str]:
    """The demo server over Streamable HTTP (or ``sse``) on 127.0.0.1, an OS-chosen port; yields its URL."""
    port_file = tmp / f"demo-port-{transport}"
    proc = subprocess.Popen(
        [sys.executable, str(DEMO), transport, str(port_file)],
        env={**os.environ, "DEMO_MARK_DIR": str(marks)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        if not wait_for(lambda: port_file.exists() or proc.poll() is not None, 60):
            raise RuntimeError("the demo HTTP server did not start")
        if proc.poll() is not None:
            raise RuntimeError(f"the demo HTTP server exited with {proc.returncode}")
        yield f"http://127.0.0.1:{port_file.read_text().strip()}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
