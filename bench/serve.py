"""``hermes serve`` under load: 50 concurrent sessions × 5 tool-using turns through the openai SDK.

A second, quiet run sends 20 turns of one session alone, to show the
server's own cost per turn apart from 50 threads sharing the machine's cores.

Every turn is a ``read_file`` call and an answer from the fake model server
(one lane per session, so concurrent sessions never take each other's
replies). The same sessions then run in process: the agent the CLI builds,
50 threads at once, the same model script. The server's added latency per
turn is the difference of the two distributions at p50 and p99. Afterwards
every stored session is checked: all of its messages, in order (0 lost).
"""

from __future__ import annotations

import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SESSIONS = 50
TURNS = 5
SOLO_TURNS = 20


def _script(server: Any, prefix: str, sessions: int, turns: int) -> None:
    from hermes.kernel.testing import Reply, ToolCall

    for s in range(sessions):
        entries = []
        for t in range(turns):
            entries.append(Reply(tool_calls=[ToolCall("read_file", {"path": "facts.txt"}, id=f"call_{s}_{t}")]))
            entries.append(Reply(text=f"answer {s}.{t}"))
        server.lane(f"[{prefix}-{s:02d}]", *entries)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _run_threads(sessions: int, work: Any) -> list[Any]:
    results: list[Any] = [None] * sessions
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, work(i))) for i in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _serve_phase(fake: Any, folder: Path, sessions: int, turns: int) -> dict[str, Any]:
    from openai import OpenAI

    env = {**os.environ, "HERMES_HOME": str(folder / "serve-home"), "HERMES_LOAD_PLUGINS": "",
           "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": fake.openai_base_url, "HERMES_MODEL__NAME": "bench-model",
           "HERMES_SERVE__MAX_CONCURRENT": str(sessions), "HERMES_SERVE__MAX_QUEUE": str(sessions),
           "HERMES_SERVE__WORKSPACE": str(folder / "workspace"),
           # A title call is one more model request per session; both sides measure turns only.
           "HERMES_SESSIONS__AUTO_TITLE": "false"}  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "serve", "--port", "0"], env=env,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stderr is not None
    line = proc.stderr.readline()
    match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"hermes serve did not start: {line}{proc.stderr.read()}")
    base = f"http://127.0.0.1:{match.group(1)}/v1"
    warm = OpenAI(base_url=base, api_key="none", max_retries=0)
    warm.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "warm up"}])
    latencies: list[float] = []
    first: list[float] = []  # a session's first turn builds its agent; later turns reuse it
    later: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def session(index: int) -> tuple[str | None, list[str]]:
        client = OpenAI(base_url=base, api_key="none", max_retries=0, timeout=300)
        previous, answers = None, []
        for turn in range(turns):
            text = f"[srv-{index:02d}] turn {turn}: what do the facts say?"
            started = time.perf_counter()
            try:
                response = client.responses.create(model="hermes", input=text,
                                                   **({"previous_response_id": previous} if previous else {}))  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - counted, the run goes on
                with lock:
                    errors.append(f"session {index} turn {turn}: {exc}")
                return previous, answers
            with lock:
                latencies.append(time.perf_counter() - started)
                (later if turn else first).append(latencies[-1])
            previous = response.id
            answers.append(response.output_text)
        return previous, answers

    began = time.perf_counter()
    outcomes = _run_threads(sessions, session)
    wall = time.perf_counter() - began
    proc.terminate()
    proc.wait(60)
    lost = _check_store(folder / "serve-home" / "state.db", outcomes, turns, "srv")
    return {"latencies": latencies, "first": first, "later": later, "errors": errors, "lost": lost, "wall_s": wall}


def _check_store(db: Path, outcomes: list[Any], turns: int, prefix: str) -> list[str]:
    """Every session holds user, tool call, tool result, answer for each turn, in order."""
    problems = []
    with sqlite3.connect(db) as conn:
        for index, (last_id, answers) in enumerate(outcomes):
            if last_id is None:
                problems.append(f"session {index}: no response")
                continue
            session_id = last_id.split("_", 2)[2] if prefix == "srv" else last_id
            rows = conn.execute("SELECT role, content FROM messages WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
            expected = [role for _ in range(turns) for role in ("user", "assistant", "tool", "assistant")]
            if [r for r, _ in rows] != expected:
                problems.append(f"session {index}: stored roles {[r for r, _ in rows]}")
                continue
            users = [c for r, c in rows if r == "user"]
            finals = [c for i, (r, c) in enumerate(rows) if i % 4 == 3]
            if any(f"[{prefix}-{index:02d}] turn {t}" not in users[t] for t in range(turns)):
                problems.append(f"session {index}: user messages out of order")
            if finals != [f"answer {index}.{t}" for t in range(turns)] or answers != finals:
                problems.append(f"session {index}: answers {answers} vs stored {finals}")
    return problems


def _inprocess_phase(fake: Any, folder: Path, sessions: int, turns: int) -> dict[str, Any]:
    from hermes.kernel.agent.factory import build_agent
    from hermes.kernel.config import load_config
    from hermes.kernel.home import HermesHome
    from hermes.kernel.host import PluginHost

    home = HermesHome(folder / "inproc-home", "default")
    home.ensure()
    saved = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    os.environ.update(OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=fake.openai_base_url)
    config = load_config(home, environ={"HERMES_MODEL__NAME": "bench-model", "HERMES_SESSIONS__AUTO_TITLE": "false"})
    latencies: list[float] = []
    first: list[float] = []
    later: list[float] = []
    lock = threading.Lock()

    def session(index: int) -> tuple[str | None, list[str]]:
        host = PluginHost(load_plugins="")
        agent = build_agent(host=host, config=config, home=home, source="bench", cwd=folder / "workspace")
        answers = []
        try:
            for turn in range(turns):
                started = time.perf_counter()
                result = agent.run_conversation(f"[inp-{index:02d}] turn {turn}: what do the facts say?")
                with lock:
                    latencies.append(time.perf_counter() - started)
                    (later if turn else first).append(latencies[-1])
                answers.append(result["final_response"])
            return agent.session_id, answers
        finally:
            agent.close()

    try:
        began = time.perf_counter()
        outcomes = _run_threads(sessions, session)
        wall = time.perf_counter() - began
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    lost = _check_store(home.state_db, outcomes, turns, "inp")
    return {"latencies": latencies, "first": first, "later": later, "lost": lost, "wall_s": wall}


def _pair(sessions: int, turns: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same workload through a server and in process, each with its own store."""
    from hermes.kernel.testing import FakeModelServer

    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as fake:
        folder = Path(tmp)
        (folder / "workspace").mkdir()
        (folder / "workspace" / "facts.txt").write_text("the sky is blue\nwater is wet\n")
        _script(fake, "srv", sessions, turns)
        _script(fake, "inp", sessions, turns)
        return _serve_phase(fake, folder, sessions, turns), _inprocess_phase(fake, folder, sessions, turns)


def run(runs: int | None = None, sessions: int = SESSIONS, turns: int = TURNS, solo_turns: int = SOLO_TURNS) -> dict[str, Any]:
    served, local = _pair(sessions, turns)
    # One session alone: the server's own cost per turn, without 50 threads sharing the cores.
    solo_served, solo_local = _pair(1, solo_turns)
    ms = lambda values, q: round(_percentile(values, q) * 1000, 1)  # noqa: E731
    srv, inp = served["latencies"], local["latencies"]
    result = {
        "benchmark": "serve",
        "sessions": sessions,
        "turns_per_session": turns,
        "turns_done": len(srv),
        "errors": len(served["errors"]),
        "error_samples": served["errors"][:5],
        "lost_messages": len(served["lost"]),
        "lost_samples": served["lost"][:5],
        "inprocess_lost": len(local["lost"]),
        "serve_ms": {"p50": ms(srv, 0.5), "p99": ms(srv, 0.99), "mean": round(statistics.mean(srv) * 1000, 1) if srv else None},
        "inprocess_ms": {"p50": ms(inp, 0.5), "p99": ms(inp, 0.99), "mean": round(statistics.mean(inp) * 1000, 1)},
        "wall_s": {"serve": round(served["wall_s"], 2), "inprocess": round(local["wall_s"], 2)},
    }
    if srv:
        result["added_ms"] = {"p50": round(result["serve_ms"]["p50"] - result["inprocess_ms"]["p50"], 1),
                              "p99": round(result["serve_ms"]["p99"] - result["inprocess_ms"]["p99"], 1)}  # fmt: skip
    if srv and served["later"]:
        result["by_turn_ms"] = {
            phase: {"serve_p50": ms(served[phase], 0.5), "serve_p99": ms(served[phase], 0.99),
                    "inprocess_p50": ms(local[phase], 0.5), "inprocess_p99": ms(local[phase], 0.99)}
            for phase in ("first", "later")
        }  # fmt: skip
    solo_srv, solo_inp = solo_served["later"], solo_local["later"]
    result["solo"] = {"turns": solo_turns, "errors": len(solo_served["errors"]), "lost_messages": len(solo_served["lost"]),
                      "serve_p50": ms(solo_srv, 0.5), "serve_p99": ms(solo_srv, 0.99),
                      "inprocess_p50": ms(solo_inp, 0.5), "inprocess_p99": ms(solo_inp, 0.99),
                      "added_p50": round(ms(solo_srv, 0.5) - ms(solo_inp, 0.5), 1),
                      "added_p99": round(ms(solo_srv, 0.99) - ms(solo_inp, 0.99), 1)}  # fmt: skip
    print(f"serve ({sessions} concurrent sessions × {turns} tool-using turns, openai SDK, Responses API)")
    print(f"  turns done            {len(srv)} of {sessions * turns}; errors {result['errors']}; lost messages {result['lost_messages']}")
    print(f"  hermes serve          p50 {result['serve_ms']['p50']:8.1f} ms   p99 {result['serve_ms']['p99']:8.1f} ms per turn")
    print(f"  agent in process      p50 {result['inprocess_ms']['p50']:8.1f} ms   p99 {result['inprocess_ms']['p99']:8.1f} ms per turn")
    if srv:
        print(f"  added by the server   p50 {result['added_ms']['p50']:8.1f} ms   p99 {result['added_ms']['p99']:8.1f} ms per turn")
    for phase, label in (("first", "first turns (agent built)"), ("later", "later turns")):
        row = result.get("by_turn_ms", {}).get(phase)
        if row:
            print(f"  {label:<26} serve p50 {row['serve_p50']:.1f} / p99 {row['serve_p99']:.1f} ms, "
                  f"in process p50 {row['inprocess_p50']:.1f} / p99 {row['inprocess_p99']:.1f} ms")
    solo = result["solo"]
    print(f"  one session alone, {solo_turns} turns (after its first): serve p50 {solo['serve_p50']:.1f} / p99 {solo['serve_p99']:.1f} ms, "
          f"in process p50 {solo['inprocess_p50']:.1f} / p99 {solo['inprocess_p99']:.1f} ms, "
          f"added p50 {solo['added_p50']:.1f} / p99 {solo['added_p99']:.1f} ms")
    for sample in result["error_samples"] + result["lost_samples"]:
        print(f"  ! {sample}")
    return result
