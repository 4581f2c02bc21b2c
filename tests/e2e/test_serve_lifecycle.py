"""``hermes serve`` under stress of its lifecycle: clients that leave, SIGTERM mid-turn, two processes on one store."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import openai
import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.conftest import StoreBackend
from tests.e2e.serve_process import ServeProcess, db_rows, serve_env, wait_for

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def tool_results(home: Path) -> list[str]:
    return [c for (c,) in db_rows(home, "SELECT content FROM messages WHERE role = 'tool' ORDER BY id")]


def warm_up(server: ServeProcess, home: Path) -> None:
    """One finished request, so the server's first-use imports are not inside the timed part."""
    server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "warm up"}])
    db_rows(home, "DELETE FROM messages")


def start(server: FakeModelServer, home: Path, tmp_path: Path, **settings) -> ServeProcess:
    settings.setdefault("workspace", str(tmp_path / "workspace"))
    settings.setdefault("toolsets", '["terminal"]')  # these turns run commands; a server has no terminal by default
    return ServeProcess(serve_env(server, home, **settings))


def test_a_client_that_disconnects_interrupts_its_turn(fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path) -> None:
    with start(fake_model_server, hermes_home, tmp_path) as server:
        warm_up(server, hermes_home)
        fake_model_server.tool_calls(("terminal", {"command": "sleep 30"}))
        fake_model_server.reply("never asked")
        began = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            server.client(timeout=3.0).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "wait"}])
        ended = wait_for(lambda: db_rows(hermes_home, "SELECT end_reason FROM sessions WHERE end_reason != 'completed'"))
        assert ended == [("client_disconnect",)]
        assert time.monotonic() - began < 15  # the 30 s command was killed, not waited for
        assert tool_results(hermes_home)[0].startswith("interrupted by the user: the command and every process")
        time.sleep(0.5)
        assert len(fake_model_server.requests) == 2  # the warm-up and the tool call; none after the interrupt
        fake_model_server.script.clear()  # "never asked" was indeed never asked
        fake_model_server.reply("still serving")
        answer = server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "next"}])
        assert answer.choices[0].message.content == "still serving"


def test_closing_a_stream_interrupts_the_turn_and_the_conversation_continues(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    with start(fake_model_server, hermes_home, tmp_path) as server:
        warm_up(server, hermes_home)
        fake_model_server.tool_calls(("terminal", {"command": "sleep 30"}))
        client = server.client()
        stream = client.responses.create(model="hermes", input="long job", conversation="c1", stream=True)
        for event in stream:
            if event.type == "response.mcp_call.in_progress":
                break
        stream.close()
        assert wait_for(lambda: tool_results(hermes_home))[0].startswith("interrupted by the user")
        fake_model_server.reply("picking up again")
        again = client.responses.create(model="hermes", input="go on", conversation="c1")
        assert again.output_text == "picking up again"
        roles = [r for (r,) in db_rows(hermes_home, "SELECT role FROM messages WHERE session_id = 'c1' ORDER BY id")]
        assert roles == ["user", "assistant", "tool", "user", "assistant"]


def _in_thread(call) -> tuple[threading.Thread, list]:
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_sigterm_lets_a_running_turn_finish_then_ends_its_session(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    fake_model_server.tool_calls(("terminal", {"command": "sleep 2; echo slept"}))
    fake_model_server.reply("finished during the drain")
    server = start(fake_model_server, hermes_home, tmp_path, drain_timeout=30)
    with server:
        client = server.client(timeout=60)
        thread, outcome = _in_thread(lambda: client.responses.create(model="hermes", input="work", conversation="job-1"))
        assert wait_for(lambda: len(fake_model_server.requests) == 1)
        time.sleep(0.3)  # the tool is running
        server.proc.send_signal(15)
        time.sleep(0.5)
        with pytest.raises(openai.APIConnectionError):
            server.client().models.list()  # no longer accepting
        thread.join(30)
        assert outcome and not isinstance(outcome[0], Exception), outcome
        assert outcome[0].output_text == "finished during the drain"
        assert server.terminate() == 0
    assert "exit code: 0\nslept" in tool_results(hermes_home)[0]
    assert db_rows(hermes_home, "SELECT id, end_reason FROM sessions") == [("job-1", "server_shutdown")]
    assert "drained: 0 turn(s) interrupted, 1 session(s) ended (server_shutdown)" in server.stderr


def test_sigterm_interrupts_a_turn_longer_than_the_drain_timeout(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    fake_model_server.tool_calls(("terminal", {"command": "sleep 60"}))
    fake_model_server.reply("never asked")
    server = start(fake_model_server, hermes_home, tmp_path, drain_timeout=1)
    with server:
        client = server.client(timeout=60)
        thread, outcome = _in_thread(
            lambda: client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "long"}])
        )
        assert wait_for(lambda: len(fake_model_server.requests) == 1)
        time.sleep(0.3)
        began = time.monotonic()
        server.proc.send_signal(15)
        thread.join(30)
        assert isinstance(outcome[0], openai.APIStatusError) and outcome[0].status_code == 503
        assert outcome[0].code == "server_shutting_down"
        assert server.terminate() == 0
        assert time.monotonic() - began < 20
    assert db_rows(hermes_home, "SELECT end_reason FROM sessions") == [("server_shutdown",)]
    assert tool_results(hermes_home)[0].startswith("interrupted by the user")
    assert len(fake_model_server.requests) == 1
    assert "drained: 1 turn(s) interrupted," in server.stderr  # the drain timer interrupted it: not "0"


def test_two_processes_on_one_store_continue_each_others_responses(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, store_backend: StoreBackend
) -> None:
    # On PostgreSQL the second process has a HERMES_HOME of its own, like a second host:
    # all they share is the store that HERMES_STORE_URL names.
    other_home = hermes_home if store_backend.url is None else tmp_path / "second-host"
    with start(fake_model_server, hermes_home, tmp_path) as one, start(fake_model_server, other_home, tmp_path) as two:
        assert one.port != two.port
        fake_model_server.reply("one says hi")
        first = one.client().responses.create(model="hermes", input="hello from the left")
        fake_model_server.reply("two remembers")
        second = two.client().responses.create(model="hermes", input="and on the right?", previous_response_id=first.id)
        assert second.output_text == "two remembers"
        sent = [m["content"] for m in fake_model_server.requests[-1].body["messages"][1:]]
        assert sent == ["hello from the left", "one says hi", "and on the right?"]
        fake_model_server.reply("back on one")
        third = one.client().responses.create(model="hermes", input="and left again", previous_response_id=second.id)
        sent = [m["content"] for m in fake_model_server.requests[-1].body["messages"][1:]]
        assert sent[-3:] == ["and on the right?", "two remembers", "and left again"]
        session = first.id.split("_", 2)[2]
        assert {r.id.split("_", 2)[2] for r in (first, second, third)} == {session}
    assert store_backend.rows("SELECT count(*) FROM messages WHERE session_id = ?", (session,)) == [(6,)]
    if store_backend.url is not None:  # nothing went to a local file on either host
        assert not (hermes_home / "state.db").exists() and not (other_home / "state.db").exists()


def test_turns_of_one_conversation_wait_for_each_other(fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path) -> None:
    fake_model_server.reply("first, slowly", delay=2.0)
    fake_model_server.reply("second, after the first")
    with start(fake_model_server, hermes_home, tmp_path) as server:
        client = server.client(timeout=60)
        one, first = _in_thread(lambda: client.responses.create(model="hermes", input="one", conversation="shared"))
        assert wait_for(lambda: len(fake_model_server.requests) == 1)
        two, second = _in_thread(lambda: client.responses.create(model="hermes", input="two", conversation="shared"))
        one.join(30)
        two.join(30)
    assert first[0].output_text == "first, slowly" and second[0].output_text == "second, after the first"
    sent = [m["content"] for m in fake_model_server.requests[1].body["messages"][1:]]
    assert sent == ["one", "first, slowly", "two"]  # the second turn saw the whole first one


def test_two_first_requests_for_one_new_conversation_make_one_session(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    fake_model_server.reply("answer")
    with start(fake_model_server, hermes_home, tmp_path) as server:
        client = server.client(timeout=60)
        calls = [_in_thread(lambda text=text: client.responses.create(model="hermes", input=text, conversation="fresh"))
                 for text in ("alpha", "beta")]  # fmt: skip
        for thread, _ in calls:
            thread.join(30)
    outcomes = [outcome[0] for _, outcome in calls]
    assert all(not isinstance(o, Exception) for o in outcomes), outcomes
    assert db_rows(hermes_home, "SELECT id FROM sessions") == [("fresh",)]
    users = [c for (c,) in db_rows(hermes_home, "SELECT content FROM messages WHERE role = 'user' ORDER BY id")]
    assert sorted(users) == ["alpha", "beta"]
