"""Server logs (routing, redaction, mode) and the exit guard over child process groups."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import time
from pathlib import Path

from hermes.plugins.mcp.children import ChildGroups
from hermes.plugins.mcp.server_log import ServerLogs, bind, install_sdk_logging, noise_size
from tests.plugins.mcp.servers import alive

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def test_sdk_records_go_to_the_log_of_the_server_whose_task_logged_them(tmp_path: Path) -> None:
    logs = ServerLogs(tmp_path / "logs")
    install_sdk_logging(logs)

    async def server(name: str) -> None:
        bind(logs, name)

        async def child() -> None:  # a task the SDK starts inherits the binding
            logging.getLogger("mcp.client.stdio").warning("from %s with token %s", name, TOKEN)

        await asyncio.create_task(child())

    async def both() -> None:
        await asyncio.gather(server("one"), server("two"))

    asyncio.run(both())
    logging.getLogger("mcp").warning("outside any server")
    logs.close()
    one, two = (tmp_path / "logs" / "mcp-one.log").read_text(), (tmp_path / "logs" / "mcp-two.log").read_text()
    assert "from one" in one and "from two" not in one and "from two" in two
    assert TOKEN[4:20] not in one + two and "[REDACTED:github-token]" in one
    assert "outside any server" in (tmp_path / "logs" / "mcp-sdk.log").read_text()
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in (tmp_path / "logs").iterdir())
    assert not logging.getLogger("mcp").propagate


def test_a_stderr_pipe_copies_lines_redacted_until_the_child_exits(tmp_path: Path) -> None:
    logs = ServerLogs(tmp_path)
    (tmp_path / "mcp-x.log").write_text("")
    (tmp_path / "mcp-x.log").chmod(0o644)  # an older, wider file is narrowed
    writer, release = logs.stderr_pipe("x")
    proc = subprocess.Popen([sys.executable, "-c", f"import sys; print('key={TOKEN}', file=sys.stderr)"], stderr=writer)
    release()
    proc.wait(30)
    deadline = time.monotonic() + 10
    while "key=" not in (tmp_path / "mcp-x.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    text = (tmp_path / "mcp-x.log").read_text()
    assert "stderr: key=[REDACTED:github-token]" in text and TOKEN[4:20] not in text
    assert (tmp_path / "mcp-x.log").stat().st_mode & 0o777 == 0o600
    logs.close()


def test_noise_size_is_the_length_of_the_line_the_sdk_could_not_parse() -> None:
    from mcp import types

    try:
        types.jsonrpc_message_adapter.validate_json("x" * 99, by_name=False)
    except ValueError as exc:
        assert noise_size(exc) == 100
    assert noise_size(RuntimeError("no input")) == 1


def test_stop_all_terminates_each_group_and_kills_what_ignores_sigterm() -> None:
    stubborn = "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \
               "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); print('up', flush=True); time.sleep(60)"  # fmt: skip
    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    rude = subprocess.Popen([sys.executable, "-c", stubborn], start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert rude.stdout is not None and rude.stdout.readline() == "up\n"
    grandchild = int(subprocess.check_output(["pgrep", "-P", str(rude.pid)], text=True).split()[0])
    groups = ChildGroups()
    groups.add(polite.pid)
    groups.add(rude.pid)
    started = time.monotonic()
    killed = groups.stop_all(grace=0.5)
    took = time.monotonic() - started
    polite.wait(5)
    rude.wait(5)
    assert killed == [rude.pid] and took < 3
    assert polite.returncode == -15 and rude.returncode == -9
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(grandchild), "the group's other members must go too"
    assert groups.pids() == []
