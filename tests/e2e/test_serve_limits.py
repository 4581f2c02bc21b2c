"""Limits that hold, through the wire: cost limits clients cannot hang up around, and slow or greedy connections.

Each test runs ``hermes serve`` in a subprocess with the fake model server behind it.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx2 as httpx
import openai
import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.serve_process import ServeProcess, db_rows, serve_env, wait_for

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
def serve(fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path):
    started: list[ServeProcess] = []

    def start(env_extra: dict[str, str] | None = None, **settings) -> ServeProcess:
        settings.setdefault("workspace", str(tmp_path / "workspace"))
        (tmp_path / "workspace").mkdir(exist_ok=True)
        (tmp_path / "workspace" / "notes.txt").write_text("the launch code is 4711\n")
        env = serve_env(fake_model_server, hermes_home, **settings)
        env["HERMES_SESSIONS__AUTO_TITLE"] = "false"  # every upstream call below is one the test scripted
        env.update(env_extra or {})
        process = ServeProcess(env)
        started.append(process)
        return process

    yield start
    for process in started:
        process.__exit__()


def ended(home: Path) -> list[tuple[str, str]]:
    return db_rows(home, "SELECT id, end_reason FROM sessions WHERE end_reason IS NOT NULL ORDER BY started_at")


def warm_up(server: ServeProcess, fake_model_server: FakeModelServer, key: str) -> None:
    """One finished turn on another key: the server's first-use imports stay out of the part that counts."""
    fake_model_server.reply("warm", cost_usd=0.002)
    server.client(key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "warm up"}])
    fake_model_server.clear_requests()


def refused_for_cost(server: ServeProcess, key: str) -> openai.RateLimitError:
    with pytest.raises(openai.RateLimitError) as refused:
        server.client(key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "more"}])
    error = refused.value
    assert error.status_code == 429 and error.code == "cost_limit_exceeded" and error.body["type"] == "insufficient_quota"
    assert int(error.response.headers["retry-after"]) >= 1 and error.response.headers["x-should-retry"] == "false"
    return error


# --- cost limits -------------------------------------------------------------------------


def test_streams_closed_after_the_first_chunk_are_charged_and_the_next_request_is_refused(
    serve, fake_model_server: FakeModelServer, hermes, hermes_home: Path
) -> None:
    key = hermes("serve", "key", "add", "thrifty", "--cost-per-day", "0.001").stdout.strip()
    other = hermes("serve", "key", "add", "other").stdout.strip()
    server = serve()
    warm_up(server, fake_model_server, other)
    for n in range(6):
        fake_model_server.reply(f"a long answer number {n} " * 20, cost_usd=0.002)
    stream = server.client(key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "hi"}], stream=True)
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break  # hang up after the first piece of text
    stream.close()
    assert wait_for(lambda: len(ended(hermes_home)) == 2)  # the server finished with the hung-up turn
    refused = refused_for_cost(server, key)
    assert "has spent $0.0020 today, its limit is $0.001 a day" in refused.message
    for _ in range(5):  # the other five streams of the report never reach the model
        with pytest.raises(openai.RateLimitError):
            list(server.client(key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "x"}], stream=True))
    assert len(fake_model_server.requests) == 1  # one call over the limit, no more
    fake_model_server.script.clear()
    fake_model_server.reply("others are served")
    assert server.client(other).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "a"}]).choices[0].message.content == "others are served"


def test_a_client_that_hangs_up_mid_tool_is_charged_for_the_call_it_caused(
    serve, fake_model_server: FakeModelServer, hermes, hermes_home: Path
) -> None:
    key = hermes("serve", "key", "add", "thrifty", "--cost-per-day", "0.001").stdout.strip()
    server = serve({"HERMES_SERVE__TOOLSETS": "[terminal]"})  # the terminal is off on a server unless named
    warm_up(server, fake_model_server, hermes("serve", "key", "add", "other").stdout.strip())
    fake_model_server.tool_calls(("terminal", {"command": "sleep 30"}), cost_usd=0.002)
    fake_model_server.reply("never asked", cost_usd=0.002)
    with pytest.raises(openai.APITimeoutError):
        server.client(key, timeout=4.0).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "wait"}])
    assert wait_for(lambda: len(ended(hermes_home)) == 2)
    assert [reason for _, reason in ended(hermes_home)] == ["completed", "client_disconnect"]
    refused = refused_for_cost(server, key)
    assert "has spent $0.0020 today" in refused.message
    assert len(fake_model_server.requests) == 1


def test_a_limit_crossed_mid_turn_stops_the_turn_before_its_next_model_call(
    serve, fake_model_server: FakeModelServer, hermes, hermes_home: Path
) -> None:
    key = hermes("serve", "key", "add", "thrifty", "--cost-per-day", "0.003").stdout.strip()
    server = serve()
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}), cost_usd=0.002)
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}), cost_usd=0.002)
    fake_model_server.reply("never asked", cost_usd=0.002)
    with pytest.raises(openai.RateLimitError) as stopped:
        server.client(key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "read twice"}])
    assert stopped.value.code == "cost_limit_exceeded" and "has spent $0.0040 today, its limit is $0.003 a day" in stopped.value.message
    assert len(fake_model_server.requests) == 2  # the third call was never made
    roles = [r for (r,) in db_rows(hermes_home, "SELECT role FROM messages ORDER BY id")]
    assert roles == ["user", "assistant", "tool", "assistant", "tool"]  # what was done is kept
    refused_for_cost(server, key)  # and the next request is refused before it starts
    streamer = hermes("serve", "key", "add", "streamer", "--cost-per-day", "0.003").stdout.strip()
    fake_model_server.script.clear()
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}), cost_usd=0.002)
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}), cost_usd=0.002)
    fake_model_server.reply("never asked", cost_usd=0.002)
    with pytest.raises(openai.APIError) as streamed:  # a stream already begun ends with the limit's error event
        list(server.client(streamer).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "x"}], stream=True))
    assert "its limit is $0.003 a day" in str(streamed.value)
    assert len(fake_model_server.requests) == 4


def test_a_client_that_hangs_up_mid_compression_is_charged_the_summary_and_the_turn_stops(
    serve, fake_model_server: FakeModelServer, hermes, hermes_home: Path
) -> None:
    key = hermes("serve", "key", "add", "thrifty", "--cost-per-day", "0.0025").stdout.strip()
    # A small window: the third turn's preflight check compresses (one summary call) before its model call.
    server = serve(env_extra={"HERMES_MODEL__CONTEXT_LENGTH": "4000", "HERMES_COMPRESSION__THRESHOLD": "0.3",
                              "HERMES_COMPRESSION__PROTECT_FIRST_N": "0", "HERMES_COMPRESSION__TAIL_MIN_MESSAGES": "3",
                              "HERMES_COMPRESSION__MIN_FIDELITY": "0"})  # fmt: skip
    client = server.client(key, timeout=60)
    for n in range(2):
        fake_model_server.reply("word " * 300 + f"answer {n}", cost_usd=0.001)
        client.responses.create(model="hermes", input=f"question {n} " + "detail " * 100, conversation="cc")
    fake_model_server.reply("the summary of it all", delay=4, cost_usd=0.001)  # the summary call, slow
    fake_model_server.reply("never asked", cost_usd=0.001)
    with pytest.raises(openai.APITimeoutError):  # hangs up while the summary is being written
        server.client(key, timeout=2.0).responses.create(model="hermes", input="question 2 " + "detail " * 100, conversation="cc")
    assert wait_for(lambda: db_rows(hermes_home, "SELECT id FROM sessions WHERE end_reason = 'compression'"), timeout=30)
    time.sleep(0.5)
    refused = refused_for_cost(server, key)
    assert "has spent $0.0030 today" in refused.message  # two turns and the summary: one call over, no more
    assert len(fake_model_server.requests) == 3 and fake_model_server.requests[-1].body.get("stream") is not True


# A big window whose preflight estimate never triggers, a small tail: a reply that reports
# 80,000 prompt tokens makes the next step compress turns 1 and 2 (a summary call).
_COMPRESS_ON_REPORTED_TOKENS = {
    "HERMES_MODEL__CONTEXT_LENGTH": "100000", "HERMES_COMPRESSION__THRESHOLD": "0.5",
    "HERMES_COMPRESSION__TARGET_RATIO": "0.01", "HERMES_COMPRESSION__PROTECT_FIRST_N": "0",
    "HERMES_COMPRESSION__TAIL_MIN_MESSAGES": "3", "HERMES_COMPRESSION__MIN_FIDELITY": "0",
    "HERMES_AUXILIARY__COMPRESSION__MODEL": "aux-model",
}  # fmt: skip


def _turn_that_compresses(server: ServeProcess, fake: FakeModelServer, key: str, conversation: str, tool_cost: float) -> None:
    """Two cheap turns ($0.0005 each), then a third whose tool step costs ``tool_cost`` and fills the window."""
    from hermes.kernel.testing import Reply, ScriptedUsage, ToolCall

    client = server.client(key)
    for n in range(2):
        fake.reply(f"answer {n}: " + "words " * 400, cost_usd=0.0005)
        client.responses.create(model="hermes", input=f"question {n} " + "detail " * 200, conversation=conversation)
    fake.enqueue(Reply(tool_calls=(ToolCall("read_file", {"path": "notes.txt"}),), cost_usd=tool_cost,
                       usage=ScriptedUsage(input_tokens=80_000, output_tokens=10)))  # fmt: skip
    fake.reply("## Active Task\nquestion 2\n## Critical Context\nthe answers", cost_usd=0.001)  # the summary
    fake.reply("never asked", cost_usd=0.001)
    with pytest.raises(openai.RateLimitError) as stopped:
        client.responses.create(model="hermes", input="question 2", conversation=conversation)
    assert stopped.value.code == "cost_limit_exceeded"
    fake.script.clear()


def test_a_summary_on_the_auxiliary_model_is_charged_to_the_key_and_refused_at_its_limit(
    serve, fake_model_server: FakeModelServer, hermes
) -> None:
    charged = hermes("serve", "key", "add", "charged", "--cost-per-day", "0.0025").stdout.strip()
    at_limit = hermes("serve", "key", "add", "at-limit", "--cost-per-day", "0.0025").stdout.strip()
    server = serve(env_extra=_COMPRESS_ON_REPORTED_TOKENS)
    warm_up(server, fake_model_server, hermes("serve", "key", "add", "other").stdout.strip())
    # $0.0015 spent when the window fills: the summary ($0.001) is allowed and reaches the limit,
    # so the model call after it is never made.
    _turn_that_compresses(server, fake_model_server, charged, "conv-charged", tool_cost=0.0005)
    assert [r.body["model"] for r in fake_model_server.requests] == ["test-model"] * 3 + ["aux-model"]
    assert "has spent $0.0025 today" in refused_for_cost(server, charged).message
    fake_model_server.clear_requests()
    # $0.003 spent when the window fills: the key is at its limit, the auxiliary model is never asked.
    _turn_that_compresses(server, fake_model_server, at_limit, "conv-at-limit", tool_cost=0.002)
    assert [r.body["model"] for r in fake_model_server.requests] == ["test-model"] * 3
    assert "has spent $0.0030 today" in refused_for_cost(server, at_limit).message


def test_a_sub_agent_on_its_own_model_is_charged_to_the_key_and_refused_at_its_limit(
    serve, fake_model_server: FakeModelServer, hermes
) -> None:
    charged = hermes("serve", "key", "add", "charged", "--cost-per-day", "0.0025").stdout.strip()
    at_limit = hermes("serve", "key", "add", "at-limit", "--cost-per-day", "0.001").stdout.strip()
    server = serve(env_extra={"HERMES_DELEGATION__MODEL": "child-model"})
    warm_up(server, fake_model_server, hermes("serve", "key", "add", "other").stdout.strip())

    def delegating_turn(key: str) -> str:
        fake_model_server.tool_calls(("delegate_task", {"tasks": [{"goal": "look at the notes"}]}), cost_usd=0.001)
        fake_model_server.reply("the child's report", cost_usd=0.002)
        fake_model_server.reply("never asked", cost_usd=0.001)
        with pytest.raises(openai.RateLimitError) as stopped:
            server.client(key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "delegate"}])
        fake_model_server.script.clear()
        return stopped.value.message

    # $0.001 spent when the child starts: its call ($0.002) is allowed, and the parent's next is not.
    assert "has spent $0.0030 today" in delegating_turn(charged)
    assert [r.body["model"] for r in fake_model_server.requests] == ["test-model", "child-model"]
    fake_model_server.clear_requests()
    # The parent's first call reaches the limit: the child on its own model is never asked.
    assert "has spent $0.0010 today" in delegating_turn(at_limit)
    assert [r.body["model"] for r in fake_model_server.requests] == ["test-model"]


@pytest.mark.parametrize("how", ["previous_response_id", "conversation"])
def test_a_stateful_conversation_is_charged_each_turns_own_cost_not_its_running_total(
    serve, fake_model_server: FakeModelServer, hermes, how: str
) -> None:
    key = hermes("serve", "key", "add", "steady", "--cost-per-day", "0.0035").stdout.strip()
    server = serve()
    client = server.client(key)
    for n in range(5):
        fake_model_server.reply(f"turn {n}", cost_usd=0.001)
    previous = None
    for n in range(4):  # 0.001 each: after three turns 0.003 is spent, under the limit, so a fourth runs
        options = {"previous_response_id": previous} if how == "previous_response_id" and previous else {}
        if how == "conversation":
            options = {"conversation": "conv-steady"}
        answer = client.responses.create(model="hermes", input=f"message {n}", **options)
        assert answer.output_text == f"turn {n}"
        previous = answer.id
    with pytest.raises(openai.RateLimitError) as refused:
        client.responses.create(model="hermes", input="one more", **({"previous_response_id": previous}
                                                                       if how == "previous_response_id" else {"conversation": "conv-steady"}))  # fmt: skip
    assert refused.value.code == "cost_limit_exceeded" and "has spent $0.0040 today" in refused.value.message
    assert len(fake_model_server.requests) == 4


def test_wrong_types_in_the_limit_config_are_one_line_at_start(hermes, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True, exist_ok=True)
    config = hermes_home / "config.yaml"
    for body, says in [
        ("serve:\n  cost_per_day: lots\n", "serve.cost_per_day: 'lots' is not allowed"),
        ("serve:\n  header_timeout: soon\n", "serve.header_timeout: 'soon' is not allowed"),
        ("serve:\n  max_connections_per_client: 0\n", "serve.max_connections_per_client: 0 is not allowed"),
        ("serve:\n  api_keys:\n  - {name: a, sha256: ab, cost_per_day: lots}\n", "serve.api_keys[0].cost_per_day must be a number"),
    ]:
        config.write_text(body)
        bad = hermes("serve", "--port", "0")
        lines = bad.stderr.strip().splitlines()
        assert bad.returncode != 0 and len(lines) == 1 and says in lines[0] and "Traceback" not in bad.stderr, bad.stderr


# --- slow and greedy connections ------------------------------------------------------------


def _client_from(address: str, server: ServeProcess, **options) -> openai.OpenAI:
    """An SDK client whose connections come from another loopback address (its own per-address count)."""
    http = httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=options.pop("timeout", 30.0))
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, http_client=http)


def _connect(server: ServeProcess, source: str = "127.0.0.1", timeout: float = 10.0) -> socket.socket:
    sock = socket.socket()
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", server.port))
    return sock


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], dict]:
    data = b""
    while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < int(
        dict(line.split(b": ", 1) for line in data.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]).get(b"content-length", b"0")
    ):  # fmt: skip
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body or b"null")


def test_a_body_that_stalls_midway_gets_a_408_and_the_server_keeps_answering(serve, fake_model_server: FakeModelServer) -> None:
    server = serve(body_timeout=1, header_timeout=5)
    sock = _connect(server)
    sock.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\ncontent-type: application/json\r\n".encode()
                 + b"content-length: 200\r\n\r\n{\"model\": \"hermes\", \"mess")  # fmt: skip
    began = time.monotonic()
    status, headers, body = _read_response(sock)
    waited = time.monotonic() - began
    assert status == 408 and body["error"]["code"] == "request_timeout" and "serve.body_timeout" in body["error"]["message"]
    assert headers["connection"] == "close" and sock.recv(10) == b""  # closed
    assert 0.5 < waited < 8
    sock.close()
    fake_model_server.reply("still here")
    assert server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "a"}]).choices[0].message.content == "still here"
    assert fake_model_server.requests and len(fake_model_server.requests) == 1  # the stalled request never ran
    assert "Traceback" not in server.stderr and "Exception in ASGI" not in server.stderr


def test_headers_must_arrive_within_the_header_timeout_however_slowly_they_drip(serve) -> None:
    server = serve(header_timeout=1.5)
    silent = _connect(server)  # connects and sends nothing
    dripping = _connect(server)
    began = time.monotonic()
    dripping.sendall(b"GET /health HTTP/1.1\r\n")
    for n in range(6):  # a header every 0.4 s: each byte is progress, the deadline still holds
        time.sleep(0.4)
        try:
            dripping.sendall(f"x-drip-{n}: 1\r\n".encode())
        except OSError:
            break
    status, _, body = _read_response(dripping)
    assert status == 408 and "serve.header_timeout" in body["error"]["message"]
    assert time.monotonic() - began < 5
    assert _read_response(silent)[0] == 408
    with httpx.Client() as client:
        assert client.get(server.url + "/health").json()["status"] == "ok"


def test_connections_over_the_per_address_and_total_caps_get_429_and_503_with_retry_after(serve) -> None:
    server = serve(max_connections_per_client=3, max_connections=5, header_timeout=30)
    held = [_connect(server) for _ in range(3)]
    time.sleep(0.3)
    over = _connect(server)
    over.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    status, headers, body = _read_response(over)
    assert status == 429 and headers["retry-after"] == "1" and body["error"]["code"] == "too_many_connections_per_client"
    assert body["error"]["type"] == "rate_limit_error" and "serve.max_connections_per_client" in body["error"]["message"]
    other = _client_from("127.0.0.2", server)  # another address has its own count
    assert other.models.list().data[0].id == "hermes"
    held += [_connect(server, "127.0.0.3") for _ in range(2)]  # 5 open in all
    time.sleep(0.3)
    full = _connect(server, "127.0.0.4")
    full.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    status, headers, body = _read_response(full)
    assert status == 503 and headers["retry-after"] == "1" and body["error"]["code"] == "too_many_connections"
    for sock in held:
        sock.close()
    time.sleep(0.3)
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.4")) as client:
        assert client.get(server.url + "/health").status_code == 200  # freed when they closed


def test_two_thousand_slow_connections_leave_a_normal_client_answered(serve, fake_model_server: FakeModelServer) -> None:
    """Slowloris on loopback: 2,000 connections dribbling headers; a client from another address still gets answers."""
    server = serve(header_timeout=60, max_connections_per_client=64)
    deadline = time.monotonic() + 90  # a hard cap on the whole attack
    slow: list[socket.socket] = []
    refused = 0
    try:
        for _ in range(2000):
            assert time.monotonic() < deadline
            try:
                sock = _connect(server, timeout=5)
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n")
                slow.append(sock)
            except OSError:
                refused += 1
        opened = time.monotonic() - deadline + 90
        fake_model_server.reply("answered under attack")
        normal = _client_from("127.0.0.2", server)
        began = time.monotonic()
        answer = normal.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "hello"}])
        took = time.monotonic() - began
        assert answer.choices[0].message.content == "answered under attack"
        held = refused_now = 0
        for sock in slow[:200]:  # the first 64 are held (until their deadline), the rest were answered 429
            sock.settimeout(0.01)
            try:
                data = sock.recv(200)
            except TimeoutError:
                held += 1
                continue
            refused_now += b" 429 " in data
        assert held == 64 and refused_now == 200 - 64
        print(f"\nslowloris: {len(slow)} connections opened in {opened:.1f} s, {held} held, "
              f"normal client answered in {took:.3f} s")
    finally:
        for sock in slow:
            sock.close()
