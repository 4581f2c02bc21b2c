"""The fake server itself: scripting API, request log, script files, the shell command, laziness."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hermes.kernel import ModelRequest, ProviderError, StreamDelta
from hermes.kernel.testing import FakeModelServer, Fault, Reply, ScriptedUsage, load_script
from hermes.kernel.testing.fixtures import fake_model_server, scripted_provider  # noqa: F401
from hermes.kernel.testing.provider import FAULT_REASONS, ScriptedProvider


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_queue_default_and_request_log(fake_model_server: FakeModelServer) -> None:
    fake_model_server.reply("first").fault("auth")
    url = fake_model_server.openai_base_url + "/chat/completions"
    assert post(url, {"model": "m", "messages": [{"role": "user", "content": "1"}]})[1]["choices"][0]["message"]["content"] == "first"
    assert post(url, {"model": "m", "messages": []})[0] == 401
    assert post(url, {"model": "m", "messages": []})[1]["choices"][0]["message"]["content"] == "OK"
    assert [r.messages for r in fake_model_server.requests][0] == [{"role": "user", "content": "1"}]
    assert all(r.api == "openai" for r in fake_model_server.requests)
    status, body = post(fake_model_server.base_url + "/v1/nowhere", {})
    assert status == 404
    fake_model_server.clear_requests()
    assert fake_model_server.requests == []


def test_script_file_and_validation(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(
        "default: {text: fallback}\n"
        "replies:\n"
        "  - {text: hi, usage: {input_tokens: 3, cache_read_tokens: 9, output_tokens: 1}}\n"
        "  - {tool_calls: [{name: read, arguments: {path: x}}]}\n"
        "  - {fault: rate_limit, retry_after: 2}\n",
        encoding="utf-8",
    )
    script = load_script(path)
    first, second, third = script.next(), script.next(), script.next()
    assert first == Reply(text="hi", usage=ScriptedUsage(input_tokens=3, cache_read_tokens=9, output_tokens=1))
    assert second.tool_calls[0].name == "read" and third == Fault("rate_limit", retry_after=2)
    assert script.next().text == "fallback"
    bad = tmp_path / "bad.json"
    bad.write_text('[{"fault": "gremlins"}]', encoding="utf-8")
    with pytest.raises(ValueError, match="unknown fault 'gremlins'"):
        load_script(bad)


def test_serve_from_a_shell(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the shell"}]), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel.testing", "serve", "--script", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        status, body = post(base_url + "/v1/messages", {"model": "claude-x", "max_tokens": 5,
                                                        "messages": [{"role": "user", "content": "hi"}]})
        assert status == 200 and body["content"] == [{"type": "text", "text": "from the shell"}]
    finally:
        proc.terminate()
        proc.wait(5)
    assert proc.returncode == 0


def test_serve_with_a_bad_script_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "hermes.kernel.testing", "serve", "--script",
                             str(tmp_path / "missing.json")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and result.stderr.startswith("error: cannot load script")
    assert len(result.stderr.strip().splitlines()) == 1


def test_scripted_provider_matches_the_real_classification(scripted_provider: ScriptedProvider) -> None:
    scripted_provider.script.add(Reply("alpha beta", reasoning="hmm"), Fault("context_overflow", limit=4096))
    items = list(scripted_provider.stream(ModelRequest(model="m", messages=[{"role": "user", "content": "x"}])))
    assert [i.text for i in items if isinstance(i, StreamDelta)] == ["", "alpha ", "beta"]
    assert items[-1].text == "alpha beta" and items[-1].reasoning == "hmm"
    with pytest.raises(ProviderError) as caught:
        scripted_provider.complete(ModelRequest(model="m", messages=[]))
    assert caught.value.reason == "context_overflow" and caught.value.context_limit == 4096
    assert len(scripted_provider.requests) == 2
    assert set(FAULT_REASONS) == set(__import__("hermes.kernel.testing", fromlist=["FAULT_KINDS"]).FAULT_KINDS)


def test_sdks_are_not_imported_by_the_kernel_or_help() -> None:
    code = (
        "import sys\n"
        "import hermes.kernel, hermes.kernel.testing, hermes.plugins.openai_provider, hermes.plugins.anthropic_provider\n"
        "from hermes.kernel.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('openai', 'anthropic', 'sqlite_utils') if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stderr


def test_lanes_route_parallel_conversations_by_their_first_user_message() -> None:
    import openai

    from hermes.kernel.testing import FakeModelServer

    with FakeModelServer() as server:
        server.lane("task A", Reply(text="A1"), Reply(text="A2")).lane("task B", Reply(text="B1"))
        server.reply("main queue")
        client = openai.OpenAI(api_key="sk-x", base_url=server.openai_base_url, max_retries=0)

        def ask(text: str) -> str:
            reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
            return reply.choices[0].message.content

        assert [ask("do task B"), ask("do task A"), ask("other"), ask("task A again"), ask("task A x")] == [
            "B1", "A1", "main queue", "A2", "OK"]
