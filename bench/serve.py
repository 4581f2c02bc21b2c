"""``hermes serve`` under load: 50 concurrent clients × 5 turns each, tool-using and tool-less.

Tool-using turns go through the Responses API, continued by
``previous_response_id``: the fake model server scripts a ``read_file`` call
and then the answer, so each turn needs 2 upstream model calls. Tool-less
turns are stateless Chat Completions requests (one user message each, a new
session every time): the script answers at once, so each needs exactly 1.
The fake server's request log is counted per turn (the newest turn marked in
a request's user messages), so a server that adds model calls of its own
(titles, retries) shows up as turns over their count. The background memory
and skill reviews are off on both sides: they are calls about a conversation
every few turns, not part of one.

Each client has its own lane of the script, so concurrent sessions never take
each other's replies. The same turns then run in process, 50 threads of the
agent the CLI builds against the same script; the server's added latency per
turn is the difference of the two distributions at p50 and p99. Afterwards
every stored session is checked: all of its messages, in order (0 lost). A
quiet run of one client alone, each kind, shows the server's own cost per
turn apart from 50 threads sharing the machine's cores.
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
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["CALLS_PER_TURN", "SESSIONS", "SOLO_TURNS", "TURNS", "run"]

SESSIONS = 50
TURNS = 5
SOLO_TURNS = 20
#: The upstream model calls one scripted turn needs: a tool call and the answer, or just the answer.
CALLS_PER_TURN = {"tools": 2, "chat": 1}
#: Lane prefixes: (served, in process) for each kind of turn.
_PREFIXES = {"tools": ("srv", "inp"), "chat": ("chs", "chi")}
_MARK = re.compile(r"\[([a-z]+)-(\d+)\] turn (\d+):")
#: Settings both sides share. The background memory and skill reviews (every 10 turns, after 15
#: tool steps) are model calls about a conversation, not part of a turn, and would take the
#: replies scripted for its next turns; the CLI's model-made title likewise (a server titles
#: API sessions from their first message, without a call).
_SETTINGS = {"HERMES_MODEL__NAME": "bench-model", "HERMES_MEMORY__NUDGE_INTERVAL": "0",
             "HERMES_SKILLS__REVIEW_INTERVAL": "0"}  # fmt: skip


def _prompt(prefix: str, index: int, turn: int) -> str:
    return f"[{prefix}-{index:02d}] turn {turn}: what do the facts say?"


def _script(server: Any, prefix: str, sessions: int, turns: int, kind: str) -> None:
    from hermes.kernel.testing import Reply, ToolCall

    for s in range(sessions):
        entries = []
        for t in range(turns):
            if kind == "tools":
                entries.append(Reply(tool_calls=[ToolCall("read_file", {"path": "facts.txt"}, id=f"call_{s}_{t}")]))
            entries.append(Reply(text=f"answer {s}.{t}"))
        server.lane(f"[{prefix}-{s:02d}]", *entries)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _run_threads(sessions: int, work: Callable[[int], Any]) -> list[Any]:
    results: list[Any] = [None] * sessions
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, work(i))) for i in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _upstream_calls(fake: Any, prefix: str, sessions: int, turns: int, kind: str) -> dict[str, Any]:
    """How many model requests each turn sent upstream, from the fake server's log.

    A request belongs to the newest turn marked in its user messages: a tool
    step's follow-up carries the turn's history, a stateless request its only
    message, and a call the server adds (a title, a background review) the
    conversation it is about. Every turn of the phase is counted, one that
    sent none as 0.
    """
    counts: Counter[tuple[int, int]] = Counter()
    for request in fake.requests:
        users = [m for m in request.messages if isinstance(m, dict) and m.get("role") == "user"]
        for message in reversed(users):
            marks = [mark for mark in _MARK.findall(_text(message.get("content"))) if mark[0] == prefix]
            if marks:
                counts[(int(marks[-1][1]), int(marks[-1][2]))] += 1
                break
    per_turn = [counts.get((s, t), 0) for s in range(sessions) for t in range(turns)]
    expected = CALLS_PER_TURN[kind]
    histogram = Counter(per_turn)
    return {
        "expected": expected,
        "turns": len(per_turn),
        "histogram": {str(calls): histogram[calls] for calls in sorted(histogram)},  # calls -> turns
        "mean": round(statistics.mean(per_turn), 3) if per_turn else None,
        "off": sum(1 for calls in per_turn if calls != expected),
        "total": sum(per_turn),
    }


# --- through the server ---------------------------------------------------------------


class _Server:
    """``hermes serve`` in a subprocess over the fake model server, on a free port."""

    def __init__(self, fake: Any, folder: Path, concurrent: int) -> None:
        env = {**os.environ, **_SETTINGS, "HERMES_HOME": str(folder / "serve-home"), "HERMES_LOAD_PLUGINS": "",
               "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": fake.openai_base_url,
               "HERMES_SERVE__MAX_CONCURRENT": str(concurrent), "HERMES_SERVE__MAX_QUEUE": str(concurrent),
               "HERMES_SERVE__WORKSPACE": str(folder / "workspace")}  # fmt: skip
        # The server's own defaults otherwise (titles included), so any call it adds to a turn is counted.
        self.proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "serve", "--port", "0"], env=env,
                                     stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"hermes serve did not start: {line}{self.proc.stderr.read()}")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # a full pipe must never block it
        self.base = f"http://127.0.0.1:{match.group(1)}/v1"
        self.db = folder / "serve-home" / "state.db"

    def client(self) -> Any:
        from openai import OpenAI

        return OpenAI(base_url=self.base, api_key="none", max_retries=0, timeout=300)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


def _tools_turns(server: _Server, prefix: str, turns: int) -> Callable[[int, Callable[..., Any]], Any]:
    """A client's tool-using turns: one Responses conversation, each turn continuing the last."""

    def work(index: int, timed: Callable[..., Any]) -> tuple[str | None, list[str]]:
        previous, answers = None, []
        with server.client() as client:  # its connection closes with it: a phase after this one starts afresh
            for turn in range(turns):
                options = {"previous_response_id": previous} if previous else {}
                response = timed(turn, lambda: client.responses.create(model="hermes", input=_prompt(prefix, index, turn), **options))
                if response is None:
                    break
                previous = response.id
                answers.append(response.output_text)
        return previous.split("_", 2)[2] if previous else None, answers  # resp_at<n>_<session id>

    return work


def _chat_turns(server: _Server, prefix: str, turns: int) -> Callable[[int, Callable[..., Any]], Any]:
    """A client's tool-less turns: stateless Chat Completions requests, a new session each."""

    def work(index: int, timed: Callable[..., Any]) -> tuple[list[str | None], list[str]]:
        sessions, answers = [], []
        with server.client() as client:
            for turn in range(turns):
                messages = [{"role": "user", "content": _prompt(prefix, index, turn)}]
                response = timed(turn, lambda: client.chat.completions.create(model="hermes", messages=messages))
                if response is None:
                    break
                sessions.append(((response.model_extra or {}).get("hermes") or {}).get("session_id"))
                answers.append(response.choices[0].message.content or "")
        return sessions, answers

    return work


def _timed_phase(sessions: int, work: Callable[[int, Callable[..., Any]], Any]) -> dict[str, Any]:
    """Run ``work`` for every client at once; each turn timed, a failed one counted (the served clients stop there)."""
    latencies: list[float] = []
    first: list[float] = []  # a session's first turn builds its agent; later turns may reuse it
    later: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one(index: int) -> Any:
        def timed(turn: int, call: Callable[[], Any]) -> Any:
            started = time.perf_counter()
            try:
                value = call()
            except Exception as exc:  # noqa: BLE001 - counted, the run goes on
                with lock:
                    errors.append(f"client {index} turn {turn}: {type(exc).__name__}: {exc}")
                return None
            took = time.perf_counter() - started
            with lock:
                latencies.append(took)
                (later if turn else first).append(took)
            return value

        return work(index, timed)

    began = time.perf_counter()
    outcomes = _run_threads(sessions, one)
    return {"outcomes": outcomes, "latencies": latencies, "first": first, "later": later, "errors": errors,
            "wall_s": time.perf_counter() - began}  # fmt: skip


def _serve_phases(fake: Any, folder: Path, sessions: int, turns: int, kinds: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    server = _Server(fake, folder, sessions)
    try:
        with server.client() as warm:
            warm.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "warm up"}])
        phases = {}
        for kind in kinds:
            prefix = _PREFIXES[kind][0]
            work = _tools_turns(server, prefix, turns) if kind == "tools" else _chat_turns(server, prefix, turns)
            phases[kind] = _timed_phase(sessions, work)
    finally:
        server.stop()
    for kind, phase in phases.items():
        prefix = _PREFIXES[kind][0]
        phase["lost"] = _check_store(server.db, phase["outcomes"], turns, prefix, kind)
        phase["calls"] = _upstream_calls(fake, prefix, sessions, turns, kind)
    return phases


# --- the stored sessions ----------------------------------------------------------------


def _check_store(db: Path, outcomes: list[Any], turns: int, prefix: str, kind: str) -> list[str]:
    """Every turn's messages stored, in order: user, tool call, tool result, answer (tool-less: user, answer)."""
    problems = []
    with sqlite3.connect(db) as conn:

        def rows(session_id: str | None) -> list[tuple[str, str]]:
            query = "SELECT role, content FROM messages WHERE session_id = ? ORDER BY id"
            return conn.execute(query, (session_id,)).fetchall() if session_id else []

        for index, (session, answers) in enumerate(outcomes):
            expected_answers = [f"answer {index}.{t}" for t in range(turns)]
            if answers != expected_answers:
                problems.append(f"client {index}: answers {answers}")
                continue
            if kind == "chat":  # one session per request
                stored = [rows(session_id) for session_id in session]
                for turn, messages in enumerate(stored):
                    if [r for r, _ in messages] != ["user", "assistant"] or _prompt(prefix, index, turn) not in messages[0][1] \
                            or messages[1][1] != expected_answers[turn]:  # fmt: skip
                        problems.append(f"client {index} turn {turn}: stored {messages}")
                continue
            messages = rows(session)
            roles = [r for r, _ in messages]
            if roles != [role for _ in range(turns) for role in ("user", "assistant", "tool", "assistant")]:
                problems.append(f"client {index}: stored roles {roles}")
                continue
            users = [c for r, c in messages if r == "user"]
            finals = [c for i, (_, c) in enumerate(messages) if i % 4 == 3]
            if any(_prompt(prefix, index, t) not in users[t] for t in range(turns)):
                problems.append(f"client {index}: user messages out of order")
            if finals != expected_answers:
                problems.append(f"client {index}: stored answers {finals}")
    return problems


# --- in process -------------------------------------------------------------------------


def _inprocess_phases(fake: Any, folder: Path, sessions: int, turns: int, kinds: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The same turns through the agent the CLI builds, one per client: a session each, or (tool-less) one per turn."""
    from hermes.kernel.agent.factory import build_agent
    from hermes.kernel.config import load_config
    from hermes.kernel.home import HermesHome
    from hermes.kernel.host import PluginHost

    home = HermesHome(folder / "inproc-home", "default")
    home.ensure()
    saved = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    os.environ.update(OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=fake.openai_base_url)
    config = load_config(home, environ={**_SETTINGS, "HERMES_SESSIONS__AUTO_TITLE": "false"})

    def new_agent() -> Any:
        return build_agent(host=PluginHost(load_plugins=""), config=config, home=home, source="bench", cwd=folder / "workspace")

    def tools_work(prefix: str) -> Callable[[int, Callable[..., Any]], Any]:
        def work(index: int, timed: Callable[..., Any]) -> tuple[str | None, list[str]]:
            agent = new_agent()
            try:
                results = [timed(turn, lambda: agent.run_conversation(_prompt(prefix, index, turn))) for turn in range(turns)]
                return agent.session_id, [r["final_response"] for r in results if r]
            finally:
                agent.close()

        return work

    def chat_work(prefix: str) -> Callable[[int, Callable[..., Any]], Any]:
        def work(index: int, timed: Callable[..., Any]) -> tuple[list[str | None], list[str]]:
            agent = new_agent()

            def turn_alone(turn: int) -> dict[str, Any]:
                if turn:
                    agent.new_session()  # what ``/new`` does: each turn in a session of its own, as a server's
                return agent.run_conversation(_prompt(prefix, index, turn))

            try:
                results = [timed(turn, lambda: turn_alone(turn)) for turn in range(turns)]
                return [r["session_id"] for r in results if r], [r["final_response"] for r in results if r]
            finally:
                agent.close()

        return work

    phases = {}
    try:
        for kind in kinds:
            prefix = _PREFIXES[kind][1]
            phases[kind] = _timed_phase(sessions, tools_work(prefix) if kind == "tools" else chat_work(prefix))
            phases[kind]["lost"] = _check_store(home.state_db, phases[kind]["outcomes"], turns, prefix, kind)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return phases


def _pair(sessions: int, turns: int, kinds: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same workload through a server and in process, each with its own store."""
    from hermes.kernel.testing import FakeModelServer

    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as fake:
        folder = Path(tmp)
        (folder / "workspace").mkdir()
        (folder / "workspace" / "facts.txt").write_text("the sky is blue\nwater is wet\n")
        for kind in kinds:
            for prefix in _PREFIXES[kind]:
                _script(fake, prefix, sessions, turns, kind)
        return _serve_phases(fake, folder, sessions, turns, kinds), _inprocess_phases(fake, folder, sessions, turns, kinds)


# --- the report -------------------------------------------------------------------------


def _ms(values: list[float], q: float) -> float | None:
    return round(_percentile(values, q) * 1000, 1) if values else None


def _added(serve: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
    return {q: round(serve[q] - local[q], 1) if serve[q] is not None and local[q] is not None else None for q in ("p50", "p99")}


def _summary(served: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
    srv, inp = served["latencies"], local["latencies"]
    result = {
        "turns_done": len(srv),
        "errors": len(served["errors"]),
        "error_samples": served["errors"][:5],
        "lost_messages": len(served["lost"]),
        "lost_samples": served["lost"][:5],
        "inprocess_lost": len(local["lost"]),
        "upstream_calls_per_turn": served["calls"],
        "serve_ms": {"p50": _ms(srv, 0.5), "p99": _ms(srv, 0.99), "mean": round(statistics.mean(srv) * 1000, 1) if srv else None},
        "inprocess_ms": {"p50": _ms(inp, 0.5), "p99": _ms(inp, 0.99), "mean": round(statistics.mean(inp) * 1000, 1) if inp else None},
        "wall_s": {"serve": round(served["wall_s"], 2), "inprocess": round(local["wall_s"], 2)},
    }
    result["added_ms"] = _added(result["serve_ms"], result["inprocess_ms"])
    return result


def _calls_line(calls: dict[str, Any]) -> str:
    spread = ", ".join(f"{turns} turns × {n}" for n, turns in calls["histogram"].items())
    return f"{calls['mean']} per turn (needs {calls['expected']}; {spread}; {calls['off']} off)"


def _solo(served: dict[str, Any], local: dict[str, Any], turns: int) -> dict[str, Any]:
    """One client alone: its turns after the first (which builds the agent and warms the server)."""
    srv, inp = served["later"], local["later"]
    row = {"turns": turns, "errors": len(served["errors"]), "lost_messages": len(served["lost"]),
           "inprocess_lost": len(local["lost"]), "upstream_calls_per_turn": served["calls"],
           "serve_p50": _ms(srv, 0.5), "serve_p99": _ms(srv, 0.99), "inprocess_p50": _ms(inp, 0.5), "inprocess_p99": _ms(inp, 0.99)}  # fmt: skip
    added = _added({"p50": row["serve_p50"], "p99": row["serve_p99"]}, {"p50": row["inprocess_p50"], "p99": row["inprocess_p99"]})
    return {**row, "added_p50": added["p50"], "added_p99": added["p99"]}


def run(runs: int | None = None, sessions: int = SESSIONS, turns: int = TURNS, solo_turns: int = SOLO_TURNS) -> dict[str, Any]:
    kinds = ("tools", "chat")
    served, local = _pair(sessions, turns, kinds)
    # One client alone: the server's own cost per turn, without 50 threads sharing the cores.
    solo_served, solo_local = _pair(1, solo_turns, kinds)
    tools = _summary(served["tools"], local["tools"])
    result: dict[str, Any] = {"benchmark": "serve", "sessions": sessions, "turns_per_session": turns, **tools}
    if served["tools"]["later"]:
        result["by_turn_ms"] = {
            phase: {"serve_p50": _ms(served["tools"][phase], 0.5), "serve_p99": _ms(served["tools"][phase], 0.99),
                    "inprocess_p50": _ms(local["tools"][phase], 0.5), "inprocess_p99": _ms(local["tools"][phase], 0.99)}
            for phase in ("first", "later")
        }  # fmt: skip
    result["solo"] = _solo(solo_served["tools"], solo_local["tools"], solo_turns)
    result["tool_less"] = {**_summary(served["chat"], local["chat"]),
                           "solo": _solo(solo_served["chat"], solo_local["chat"], solo_turns)}  # fmt: skip
    _print(result, sessions, turns, solo_turns)
    return result


def _print(result: dict[str, Any], sessions: int, turns: int, solo_turns: int) -> None:
    print(f"serve ({sessions} concurrent clients × {turns} turns, openai SDK; per turn p50 / p99)")
    for label, row in (("tool-using turns (Responses API, previous_response_id)", result),
                       ("tool-less turns (stateless Chat Completions)", result["tool_less"])):  # fmt: skip
        print(f"  {label}")
        print(f"    turns done          {row['turns_done']} of {sessions * turns}; errors {row['errors']}; "
              f"lost messages {row['lost_messages']} (in process {row['inprocess_lost']})")  # fmt: skip
        print(f"    upstream calls      {_calls_line(row['upstream_calls_per_turn'])}")
        for name, key in (("hermes serve", "serve_ms"), ("agent in process", "inprocess_ms"), ("added by the server", "added_ms")):
            if row[key]["p50"] is not None:
                print(f"    {name:<19} p50 {row[key]['p50']:8.1f} ms   p99 {row[key]['p99']:8.1f} ms")
        solo = row["solo"]
        if solo["serve_p50"] is not None and solo["inprocess_p50"] is not None:
            print(f"    one client alone    p50 {solo['added_p50']:8.1f} ms   p99 {solo['added_p99']:8.1f} ms added "
                  f"(serve {solo['serve_p50']:.1f} / {solo['serve_p99']:.1f}, in process {solo['inprocess_p50']:.1f} / "
                  f"{solo['inprocess_p99']:.1f}, the turns after its first; {solo_turns} turns: errors {solo['errors']}, "
                  f"lost {solo['lost_messages']}, upstream calls {_calls_line(solo['upstream_calls_per_turn'])})")
        for sample in row["error_samples"] + row["lost_samples"]:
            print(f"    ! {sample}")
    for phase, label in (("first", "first turns (agent built)"), ("later", "later turns")):
        row = result.get("by_turn_ms", {}).get(phase)
        if row and row["serve_p50"] is not None and row["inprocess_p50"] is not None:
            print(f"  tool-using {label:<26} serve p50 {row['serve_p50']:.1f} / p99 {row['serve_p99']:.1f} ms, "
                  f"in process p50 {row['inprocess_p50']:.1f} / p99 {row['inprocess_p99']:.1f} ms")
