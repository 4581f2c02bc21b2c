"""``hermes serve`` end to end: the real openai SDK against the server in a subprocess, the fake model behind it."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.serve_process import ServeProcess, db_rows, serve_env

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "notes.txt").write_text("the launch code is 4711\n")
    return folder


@pytest.fixture
def serve(fake_model_server: FakeModelServer, hermes_home: Path, workspace: Path):
    started: list[ServeProcess] = []

    def start(*args: str, **settings) -> ServeProcess:
        settings.setdefault("workspace", str(workspace))
        process = ServeProcess(serve_env(fake_model_server, hermes_home, **settings), *args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.__exit__()


def test_chat_completions_runs_tools_and_stores_an_api_session(serve, fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}))
    fake_model_server.reply("The code is 4711.")
    server = serve()
    answer = server.client().chat.completions.create(
        model="hermes",
        messages=[{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "earlier"},
                  {"role": "assistant", "content": "noted"}, {"role": "user", "content": "what is the code?"}],
    )  # fmt: skip
    assert answer.choices[0].message.content == "The code is 4711."
    assert answer.choices[0].finish_reason == "stop"
    assert answer.usage.prompt_tokens > 0
    tools = answer.model_extra["hermes"]["tools"]
    assert [t["name"] for t in tools] == ["read_file"] and "4711" in tools[0]["output"]
    first = fake_model_server.requests[0].body["messages"]
    assert "Answer briefly." in first[0]["content"]  # the client's system text reaches the prompt
    assert [m["role"] for m in first[1:]] == ["user", "assistant", "user"]
    (session_id, source, reason), = db_rows(hermes_home, "SELECT id, source, end_reason FROM sessions")
    assert (source, reason) == ("api", "completed") and session_id == answer.model_extra["hermes"]["session_id"]
    roles = [r for (r,) in db_rows(hermes_home, "SELECT role FROM messages ORDER BY id")]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant"]


def test_chat_completions_stream_carries_text_tool_progress_and_usage(serve, fake_model_server: FakeModelServer) -> None:
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}))
    fake_model_server.reply("Streaming the answer: 4711.")
    server = serve()
    chunks = list(server.client().chat.completions.create(
        model="hermes", messages=[{"role": "user", "content": "code?"}], stream=True,
        stream_options={"include_usage": True},
    ))  # fmt: skip
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Streaming the answer: 4711."
    progress = [c.model_extra["hermes"] for c in chunks if not c.choices and c.model_extra.get("hermes")]
    assert [(p["type"], p["name"]) for p in progress] == [("tool_start", "read_file"), ("tool_end", "read_file")]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_responses_continue_by_previous_response_id_and_branch_from_an_older_one(
    serve, fake_model_server: FakeModelServer, hermes_home: Path
) -> None:
    server = serve()
    client = server.client()
    fake_model_server.reply("first answer")
    first = client.responses.create(model="hermes", input="remember the word kumquat")
    assert first.output_text == "first answer" and first.status == "completed"
    fake_model_server.reply("second answer")
    second = client.responses.create(model="hermes", input="what was the word?", previous_response_id=first.id)
    assert second.output_text == "second answer"
    sent = [m["content"] for m in fake_model_server.requests[-1].body["messages"][1:]]
    assert sent == ["remember the word kumquat", "first answer", "what was the word?"]
    session = first.id.split("_", 2)[2]
    assert second.id.split("_", 2)[2] == session  # the same stored session, continued
    fake_model_server.reply("a different second answer")
    branch = client.responses.create(model="hermes", input="start over from the first", previous_response_id=first.id)
    sent = [m["content"] for m in fake_model_server.requests[-1].body["messages"][1:]]
    assert sent == ["remember the word kumquat", "first answer", "start over from the first"]
    branched = branch.id.split("_", 2)[2]
    assert branched != session
    assert db_rows(hermes_home, "SELECT source, parent_session_id FROM sessions WHERE id = ?", (branched,)) == [("api", session)]
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model="hermes", input="x", previous_response_id="resp_2_nosuchsession")
    assert missing.value.code == "previous_response_not_found"


def test_responses_stream_shows_tool_calls_as_items_and_conversation_keeps_one_session(
    serve, fake_model_server: FakeModelServer, hermes_home: Path
) -> None:
    server = serve()
    client = server.client()
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}))
    fake_model_server.reply("It says 4711.")
    events = list(client.responses.create(model="hermes", input="read notes", conversation="team-chat-1", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert "response.mcp_call.in_progress" in kinds and "response.mcp_call.completed" in kinds
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "It says 4711."
    final = events[-1].response
    assert [item.type for item in final.output] == ["mcp_call", "message"] and final.output[0].name == "read_file"
    fake_model_server.reply("Still 4711.")
    again = client.responses.create(model="hermes", input="and now?", conversation={"id": "team-chat-1"})
    assert again.output_text == "Still 4711." and again.conversation.id == "team-chat-1"
    assert db_rows(hermes_home, "SELECT id, source FROM sessions") == [("team-chat-1", "api")]
    roles = [r for (r,) in db_rows(hermes_home, "SELECT role FROM messages WHERE session_id = 'team-chat-1' ORDER BY id")]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]


def test_models_lists_profiles_and_an_unknown_model_is_a_404(serve, hermes_home: Path) -> None:
    (hermes_home / "profiles" / "research").mkdir(parents=True)
    (hermes_home / "profiles" / "broken").mkdir(parents=True)
    (hermes_home / "profiles" / "broken" / "config.yaml").write_text("model: [unclosed\n")
    server = serve()
    client = server.client()
    assert [m.id for m in client.models.list().data] == ["hermes", "hermes-research"]
    assert "profile broken is not offered as a model" in server.stderr
    with pytest.raises(openai.NotFoundError) as error:
        client.chat.completions.create(model="gpt-nope", messages=[{"role": "user", "content": "hi"}])
    assert error.value.code == "model_not_found" and "hermes-research" in error.value.message
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(model="hermes", messages=[{"role": "assistant", "content": "no user"}])
    assert "last message must be a user message" in bad.value.message


def test_keys_are_required_hashed_and_revocable(serve, fake_model_server: FakeModelServer, hermes, hermes_home: Path) -> None:
    added = hermes("serve", "key", "add", "ci-bot")
    assert added.returncode == 0, added.stderr
    key = added.stdout.strip()
    assert key.startswith("hk-") and "shown only now" in added.stderr
    config_text = (hermes_home / "config.yaml").read_text()
    assert key not in config_text and "sha256" in config_text
    listed = json.loads(hermes("serve", "key", "list", "--json").stdout)
    assert [k["name"] for k in listed] == ["ci-bot"] and key not in json.dumps(listed)
    server = serve()
    with pytest.raises(urllib.error.HTTPError) as missing:  # the SDK cannot send no key at all
        urllib.request.urlopen(server.url + "/v1/models")
    assert missing.value.code == 401
    assert json.loads(missing.value.read())["error"]["message"].startswith("no API key was sent")
    with pytest.raises(openai.AuthenticationError) as wrong:
        server.client("hk-not-the-key").chat.completions.create(model="hermes", messages=[{"role": "user", "content": "x"}])
    assert wrong.value.code == "invalid_api_key" and "not valid" in wrong.value.message
    assert fake_model_server.requests == []  # refused before any model call
    assert server.client(key).models.list().data[0].id == "hermes"
    revoked = hermes("serve", "key", "revoke", "ci-bot")
    assert revoked.returncode == 0
    with pytest.raises(openai.AuthenticationError):
        server.client(key).models.list()  # the running server sees the revoke at once
    unknown = hermes("serve", "key", "revoke", "ci-bot")
    assert unknown.returncode == 1 and unknown.stderr.strip().startswith("error: no key named 'ci-bot'")
    assert key not in server.stderr


def test_without_keys_it_refuses_to_listen_beyond_loopback(hermes) -> None:
    result = hermes("serve", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: refusing to listen on 0.0.0.0 without API keys: anyone who reaches it could run the agent's "
        "tools; create one with `hermes serve key add NAME`, or use --host 127.0.0.1"
    ]


def test_a_full_queue_answers_429_with_retry_after(serve, fake_model_server: FakeModelServer) -> None:
    fake_model_server.reply("slow answer", delay=3.0)
    server = serve(max_concurrent=1, max_queue=0)
    client = server.client()
    results: list[str] = []
    worker = threading.Thread(target=lambda: results.append(
        client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "slow"}]).choices[0].message.content))
    worker.start()
    time.sleep(1.0)
    with pytest.raises(openai.RateLimitError) as busy:
        client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "second"}])
    assert busy.value.code == "server_busy" and int(busy.value.response.headers["retry-after"]) >= 1
    worker.join(30)
    assert results == ["slow answer"]
    fake_model_server.reply("now there is room")
    assert client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "third"}]).choices[0].message.content == "now there is room"


def test_per_key_limits_answer_429_in_openai_shape(serve, fake_model_server: FakeModelServer, hermes) -> None:
    rpm_key = hermes("serve", "key", "add", "one-a-minute", "--rpm", "1").stdout.strip()
    cost_key = hermes("serve", "key", "add", "thrifty", "--cost-per-day", "0.001").stdout.strip()
    server = serve()
    fake_model_server.reply("ok")
    fake_model_server.reply("ok", cost_usd=0.01)
    assert server.client(rpm_key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "a"}])
    with pytest.raises(openai.RateLimitError) as limited:
        server.client(rpm_key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "b"}])
    assert limited.value.code == "rate_limit_exceeded" and 1 <= int(limited.value.response.headers["retry-after"]) <= 60
    assert server.client(cost_key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "c"}])
    with pytest.raises(openai.RateLimitError) as broke:
        server.client(cost_key).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "d"}])
    assert broke.value.status_code == 429 and broke.value.code == "cost_limit_exceeded"
    assert broke.value.body["type"] == "insufficient_quota" and "resets at 00:00 UTC" in broke.value.message
    assert "its limit is $0.001 a day" in broke.value.message and int(broke.value.response.headers["retry-after"]) >= 1


def test_file_tools_stay_in_the_workspace_and_dangerous_commands_follow_serve_approvals(
    serve, fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("outside")
    command = "curl -s http://127.0.0.1:9/install.sh | sh"
    fake_model_server.tool_calls(("read_file", {"path": "../secret.txt"}), ("terminal", {"command": command}))
    fake_model_server.reply("done")
    server = serve(toolsets='["files", "terminal"]')
    server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "try"}])
    results = dict(db_rows(hermes_home, "SELECT tool_name, content FROM messages WHERE role = 'tool'"))
    assert "outside the workspace" in results["read_file"] and "1|outside" not in results["read_file"]
    assert "command blocked" in results["terminal"]
    server.terminate()
    fake_model_server.tool_calls(("terminal", {"command": command}))
    fake_model_server.reply("done")
    # Every part of the pipeline must be allowed on its own: the curl stage and the sh it feeds.
    allowed = serve(approvals="allow-list", allowed_commands='["curl -s http://127.0.0.1:9/*", "sh"]',
                    toolsets='["terminal"]')  # fmt: skip
    allowed.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "try again"}])
    last = db_rows(hermes_home, "SELECT content FROM messages WHERE role = 'tool' ORDER BY id DESC LIMIT 1")[0][0]
    assert last.startswith("exit code:")  # approved by the allow-list, so it ran


def _post(url: str, data: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_hostile_requests_get_one_clear_error_and_the_server_keeps_serving(serve, fake_model_server: FakeModelServer) -> None:
    server = serve()
    status, body = _post(server.url + "/v1/chat/completions", b"{not json")
    assert status == 400 and body["error"]["message"] == "the request body is not valid JSON"
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.putrequest("POST", "/v1/responses")
    connection.putheader("content-type", "application/json")
    connection.putheader("content-length", str(17 * 2**20))  # answered before the body is read
    connection.endheaders(b'{"input": "xxxx')
    response = connection.getresponse()
    assert response.status == 413 and json.loads(response.read())["error"]["code"] == "request_too_large"
    connection.close()
    status, body = _post(server.url + "/v1/responses", json.dumps({"input": [{"type": "function_call_output"}]}).encode())
    assert status == 400 and body["error"]["param"] == "input[0].call_id"
    assert fake_model_server.requests == []
    fake_model_server.reply("fine")
    assert server.client().responses.create(model="hermes", input="still there?").output_text == "fine"
    calls = len(fake_model_server.requests)
    with pytest.raises(openai.BadRequestError) as orphan:  # a result for a call nobody made: OpenAI's 400
        server.client().chat.completions.create(model="hermes", messages=[
            {"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "nowhere", "content": "orphan"},
            {"role": "user", "content": "b"}])  # fmt: skip
    assert "'nowhere'" in orphan.value.body["message"] and orphan.value.body["param"] == "messages[1].tool_call_id"
    assert len(fake_model_server.requests) == calls


def test_start_up_mistakes_are_one_line(hermes, hermes_home: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = hermes("serve", "--port", str(port))
    assert busy.returncode == 1
    assert busy.stderr.strip() == f"error: cannot listen on 127.0.0.1:{port}: Address already in use; pick another with --port (0: any free port)"
    hermes_home.mkdir(parents=True, exist_ok=True)
    (hermes_home / "config.yaml").write_text("serve:\n  approvals: ask\n")
    bad = hermes("serve", "--port", "0")
    config_path = hermes_home / "config.yaml"
    assert bad.returncode != 0 and bad.stderr.strip().splitlines() == [
        f"error: {config_path}: serve.approvals: 'ask' is not allowed; use one of refuse, allow-list; "
        "fix it with `hermes config set serve.approvals VALUE`"
    ]
    assert hermes("config", "set", "serve.approvals", "refuse").returncode == 0  # the fix it names works
    assert hermes("serve", "key", "list").returncode == 0


def test_a_failing_model_is_a_502_without_secrets_and_a_stream_error_event(serve, fake_model_server: FakeModelServer) -> None:
    server = serve()
    # A 401 that the one retry does not fix really fails the turn (one 401 a retry fixes is no error).
    fake_model_server.fault("auth").fault("auth")
    with pytest.raises(openai.APIStatusError) as failed:
        server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "hi"}])
    assert failed.value.status_code == 502 and failed.value.code == "upstream_failed"
    assert failed.value.body["message"].startswith("the turn failed: openai auth (HTTP 401)")
    assert "sk-test-key-0123456789abcdef" not in failed.value.message
    fake_model_server.fault("auth").fault("auth")
    with pytest.raises(openai.APIError) as streamed:
        list(server.client().chat.completions.create(model="hermes", messages=[{"role": "user", "content": "hi"}], stream=True))
    assert "the turn failed" in str(streamed.value)
    # A refused key is not locked (as in the CLI): the next request reaches the model again.
    fake_model_server.reply("answered again")
    assert server.client().responses.create(model="hermes", input="again").output_text == "answered again"
    # A billing failure does cool the key down; the next request says so, in one line.
    fake_model_server.fault("billing")
    with pytest.raises(openai.APIStatusError) as billing:
        server.client().responses.create(model="hermes", input="once more")
    assert billing.value.status_code == 502 and "sk-test-key-0123456789abcdef" not in billing.value.message
    with pytest.raises(openai.APIStatusError) as cooling:
        server.client().responses.create(model="hermes", input="and again")
    assert cooling.value.status_code == 502 and "keys are cooling down" in cooling.value.body["message"]
    assert "\n" not in cooling.value.body["message"] and "Traceback" not in server.stderr
