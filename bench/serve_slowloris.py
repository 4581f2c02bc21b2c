"""``hermes serve`` under a slowloris: 2,000 loopback connections dribbling headers, and one normal client.

The attacker opens its connections from 127.0.0.1 and sends the first line of
a request, then nothing more; the normal client comes from 127.0.0.2 (its own
per-address count) and asks 20 Chat Completions turns while the attack holds.
Reported: connections opened, held by the server, answered 429 at once, the
normal client's latency (p50/p99) with and without the attack, and how long the
held connections lasted before their 408 (``serve.header_timeout``).
"""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ATTACK = 2000
TURNS = 20
HEADER_TIMEOUT = 10.0


def _turns(base: str, fake: Any, turns: int) -> list[float]:
    import httpx2
    from openai import OpenAI

    http = httpx2.Client(transport=httpx2.HTTPTransport(local_address="127.0.0.2"), timeout=60)
    client = OpenAI(base_url=base, api_key="none", max_retries=0, http_client=http)
    took = []
    for n in range(turns):
        fake.reply(f"answer {n}")
        started = time.perf_counter()
        client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": f"q {n}"}])
        took.append(time.perf_counter() - started)
    return took


def run(runs: int | None = None, attack: int = ATTACK, turns: int = TURNS) -> dict[str, Any]:
    import resource

    from hermes.kernel.testing import FakeModelServer

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, attack + 500)), hard))
    with FakeModelServer() as fake, tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HERMES_HOME": str(Path(tmp) / "home"), "HERMES_LOAD_PLUGINS": "",
               "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": fake.openai_base_url, "HERMES_MODEL__NAME": "bench-model",
               "HERMES_SERVE__WORKSPACE": str(Path(tmp) / "workspace"), "HERMES_SESSIONS__AUTO_TITLE": "false",
               "HERMES_SERVE__HEADER_TIMEOUT": str(HEADER_TIMEOUT)}  # fmt: skip
        proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "serve", "--port", "0"], env=env,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert proc.stderr is not None
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", proc.stderr.readline())
        if not match:
            proc.kill()
            raise RuntimeError("hermes serve did not start")
        port = int(match.group(1))
        base = f"http://127.0.0.1:{port}/v1"
        try:
            _turns(base, fake, 2)  # warm up
            quiet = _turns(base, fake, turns)
            socks: list[socket.socket] = []
            began = time.perf_counter()
            for _ in range(attack):
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n")
                socks.append(sock)
            opened_s = time.perf_counter() - began
            loud = _turns(base, fake, turns)
            held = refused = 0
            for sock in socks:
                sock.settimeout(0.005)
                try:
                    data = sock.recv(64)
                    refused += b" 429 " in data
                except (TimeoutError, BlockingIOError):
                    held += 1
                except OSError:
                    pass
            waited = time.perf_counter()
            survivors = socks[:held]  # the server holds the first ones (its per-address cap), refuses the rest
            for sock in survivors:
                sock.settimeout(HEADER_TIMEOUT + 10)
            closed_after = None
            if survivors:
                survivors[-1].recv(64)
                closed_after = time.perf_counter() - began
            for sock in socks:
                sock.close()
        finally:
            proc.terminate()
            proc.wait(30)
    ms = lambda values, q: round(sorted(values)[min(len(values) - 1, round(q * (len(values) - 1)))] * 1000, 1)  # noqa: E731
    result = {
        "benchmark": "serve_slowloris", "attack_connections": attack, "opened_s": round(opened_s, 2),
        "held_by_server": held, "answered_429_at_once": refused,
        "normal_client_ms": {"quiet_p50": ms(quiet, 0.5), "quiet_p99": ms(quiet, 0.99),
                             "attack_p50": ms(loud, 0.5), "attack_p99": ms(loud, 0.99),
                             "attack_mean": round(statistics.mean(loud) * 1000, 1)},
        "held_closed_after_s": round(closed_after, 1) if closed_after else None, "header_timeout_s": HEADER_TIMEOUT,
        "waited_for_close_s": round(time.perf_counter() - waited, 1),
    }  # fmt: skip
    print(f"serve under slowloris ({attack} connections dribbling headers from 127.0.0.1)")
    print(f"  opened in {result['opened_s']} s; held {held}, answered 429 at once {refused}")
    n = result["normal_client_ms"]
    print(f"  normal client (127.0.0.2), {turns} turns: quiet p50 {n['quiet_p50']} ms p99 {n['quiet_p99']} ms; "
          f"under attack p50 {n['attack_p50']} ms p99 {n['attack_p99']} ms")
    print(f"  held connections answered 408 and closed {result['held_closed_after_s']} s after the attack began "
          f"(serve.header_timeout {HEADER_TIMEOUT:g} s)")
    return result
