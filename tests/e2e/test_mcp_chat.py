"""MCP tools in a real ``hermes chat``: demo servers over stdio and Streamable HTTP, the fake model server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, db_rows, hermes_chat
from tests.plugins.mcp.servers import alive, http_demo, pids, stdio_server, wait_for, write_config

pytestmark = pytest.mark.slow


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    return tmp_path / "marks"


def running_with(marker: str) -> list[int]:
    """PIDs of live processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace") and alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def tool_results(server: FakeModelServer) -> dict[str, str]:
    """Tool results by tool call id, as the model received them in the last request."""
    return {m["tool_call_id"]: m["content"] for m in server.requests[-1].messages if m.get("role") == "tool"}


def offered(server: FakeModelServer, index: int = 0) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"] for t in server.requests[index].body.get("tools", [])}


def test_stdio_and_http_servers_tools_results_reach_the_model(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    with http_demo(tmp_path, marks) as url:
        write_config(hermes_home, {"local": stdio_server(marks), "remote": {"url": url, "parallel_safe": True}})
        server.tool_calls(
            ("mcp_local_echo", {"text": "hello"}),
            ("mcp_remote_add", {"a": 2, "b": 40}),
            ("mcp_local_image", {}),
            ("mcp_remote_fail", {"message": "disk on fire"}),
        )
        server.tool_calls(
            ("mcp_remote_read_resource", {"uri": "demo://readme"}),
            ("mcp_local_get_prompt", {"name": "greet", "arguments": {"name": "Ann"}}),
            ("mcp_local_slow", {"seconds": 0.3}),
            ("mcp_remote_leak", {}),
        )
        server.reply("All done.")
        result = hermes_chat("-q", "use the demo tools", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    tools = offered(server)
    assert {"mcp_local_echo", "mcp_remote_add", "mcp_local_list_resources", "mcp_remote_get_prompt"} <= set(tools)
    assert tools["mcp_local_add"]["parameters"]["required"] == ["a", "b"]
    assert tools["mcp_local_add"]["parameters"]["type"] == "object"
    second = list(tool_results(server).values())[4:]
    contents = [m["content"] for m in server.requests[1].messages if m.get("role") == "tool"]
    assert contents[0] == "echo: hello"
    assert json.loads(contents[1]) == {"sum": 42}
    assert contents[2].startswith("[image/png, 1 KB, saved to ") and str(hermes_home / "results") in contents[2]
    saved = Path(contents[2].split("saved to ", 1)[1].rstrip("]"))
    assert saved.read_bytes().startswith(b"\x89PNG")
    assert contents[3].startswith("error: ") and "disk on fire" in contents[3]
    assert second[0] == "[resource demo://readme]\nThis is the demo readme."
    assert "user: Please greet Ann warmly." in second[1]
    assert second[2] == "slept 0.3s"
    assert "[REDACTED:openai-key]" in second[3] and "abcdefghijklmnop" not in second[3]  # redacted like every tool result
    stored = json.dumps(db_rows(hermes_home, "SELECT content FROM messages WHERE role = 'tool'"))
    assert "abcdefghijklmnop" not in stored
    started = pids(marks)
    assert len(started) == 2  # one stdio child + the HTTP server (stopped by the fixture)


def test_stdio_child_gets_filtered_env_and_dotenv_references(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    hermes_home.mkdir(parents=True, exist_ok=True)
    (hermes_home / ".env").write_text("DEMO_REF=from-dotenv\n")
    write_config(hermes_home, {"local": stdio_server(marks, env={"DEMO_MARK_DIR": str(marks), "DEMO_VALUE": "${DEMO_REF}"})})
    server.tool_calls(("mcp_local_env", {"name": "OPENAI_API_KEY"}), ("mcp_local_env", {"name": "DEMO_VALUE"}))
    server.reply("ok")
    result = hermes_chat("-q", "env", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    contents = list(tool_results(server).values())
    assert contents == ["OPENAI_API_KEY is not set", "DEMO_VALUE is set to from-dotenv"]


def test_a_server_that_never_starts_is_one_warning_and_the_agent_runs_on(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"broken": {"command": str(tmp_path / "no-such-server")}, "local": stdio_server(marks)})
    server.tool_calls(("mcp_local_echo", {"text": "still here"}))
    server.reply("fine")
    result = hermes_chat("-q", "hi", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fine\n"
    warnings = [line for line in result.stderr.splitlines() if "broken" in line]
    assert len(warnings) == 1 and "did not start" in warnings[0] and "command not found" in warnings[0]
    assert not any(name.startswith("mcp_broken_") for name in offered(server))
    assert list(tool_results(server).values()) == ["echo: still here"]


def test_a_server_that_crashes_mid_call_is_restarted(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"local": stdio_server(marks)}, restart_backoff=0.1)
    server.tool_calls(("mcp_local_crash", {}))
    server.tool_calls(("mcp_local_echo", {"text": "again"}))
    server.reply("recovered")
    result = hermes_chat("-q", "crash it", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    crash = [m["content"] for m in server.requests[1].messages if m.get("role") == "tool"]
    assert crash[0].startswith("error: ") and "stopped during tool crash" in crash[0] and "restarted" in crash[0]
    assert list(tool_results(server).values())[-1] == "echo: again"
    started = pids(marks)
    assert len(started) == 2  # the first process crashed, a second one answered
    assert wait_for(lambda: not any(alive(pid) for pid in started), 10)


def test_a_call_that_times_out_is_cancelled_on_the_server(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"local": stdio_server(marks, timeout=1)})
    server.tool_calls(("mcp_local_slow", {"seconds": 60, "tag": "late"}))
    server.reply("gave up")
    started = time.monotonic()
    result = hermes_chat("-q", "wait", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 45
    (content,) = tool_results(server).values()
    assert content.startswith("error: ") and "timed out after 1s and was cancelled" in content
    # notifications/cancelled reached the server, which cancelled the handler.
    assert wait_for(lambda: (marks / "cancelled-late").exists(), 10)


def test_ctrl_c_cancels_the_call_and_no_server_outlives_hermes(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"local": stdio_server(marks)})
    server.tool_calls(("mcp_local_slow", {"seconds": 120, "tag": "ctrlc"}))
    server.reply("never reached")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes.kernel", "chat", "-q", "wait a long time"],
        env=chat_env(server), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert wait_for(lambda: (marks / "started-ctrlc").exists(), 60), "the slow tool never started"
        (child,) = pids(marks)
        assert alive(child)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "interrupt" in err
    assert wait_for(lambda: (marks / "cancelled-ctrlc").exists(), 5)
    assert wait_for(lambda: not alive(child), 10), f"MCP server {child} outlived hermes"
    stored = db_rows(hermes_home, "SELECT content FROM messages WHERE role = 'tool'")
    assert stored and "interrupted by the user" in stored[0][0]


def test_sampling_requests_use_the_model_and_count_in_usage(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"local": stdio_server(marks)}, sampling={"enabled": True, "max_tokens_cap": 20})
    server.tool_calls(("mcp_local_ask_model", {"question": "what is 2+2?"}))
    server.reply("four")  # the server's sampling request
    server.reply("The server's model said four.")
    result = hermes_chat("-q", "ask", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The server's model said four.\n"
    sampling = server.requests[1]
    assert sampling.messages[-1]["content"] == "what is 2+2?"
    assert sampling.body.get("max_tokens", sampling.body.get("max_completion_tokens")) == 20
    assert list(tool_results(server).values()) == ["model said: four"]
    ((calls,),) = db_rows(hermes_home, "SELECT api_call_count FROM sessions")
    assert calls == 3


def test_sampling_is_refused_when_turned_off(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"local": stdio_server(marks)})
    server.tool_calls(("mcp_local_ask_model", {"question": "hi"}))
    server.reply("done")
    result = hermes_chat("-q", "ask", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 2  # no sampling request reached the model
    (content,) = tool_results(server).values()
    assert content.startswith("error: ")


def test_an_sse_server_works_and_a_dead_http_server_is_an_error_the_model_reads(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    with http_demo(tmp_path, marks, "sse") as sse_url, http_demo(tmp_path, marks) as http_url:
        write_config(hermes_home, {"old": {"url": sse_url, "transport": "sse"}, "remote": {"url": http_url}},
                     restart_backoff=0.1, max_restarts=1)  # fmt: skip
        server.tool_calls(("mcp_old_echo", {"text": "over sse"}), ("mcp_remote_crash", {}))
        server.tool_calls(("mcp_remote_echo", {"text": "anyone?"}))
        server.reply("the remote server is gone")
        result = hermes_chat("-q", "try both", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    first = [m["content"] for m in server.requests[1].messages if m.get("role") == "tool"]
    assert first[0] == "echo: over sse"
    assert first[1].startswith("error: ") and "remote" in first[1]
    last = list(tool_results(server).values())[-1]
    assert last.startswith("error: ") and "remote" in last
    assert result.stdout == "the remote server is gone\n"


def test_mcp_tools_work_through_the_anthropic_provider(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"local": stdio_server(marks)})
    server.tool_calls(("mcp_local_add", {"a": 1, "b": 2}), ("mcp_local_get_prompt", {"name": "greet", "arguments": {"name": "Bo"}}))
    server.reply("3, and a greeting")
    result = hermes_chat("-q", "add", env=chat_env(server, "anthropic"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tools = {t["name"]: t for t in server.requests[0].body["tools"]}
    assert tools["mcp_local_add"]["input_schema"]["required"] == ["a", "b"]
    assert tools["mcp_local_get_prompt"]["input_schema"]["properties"]["name"]["enum"] == ["greet"]
    results = [b for m in server.requests[-1].body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]  # fmt: skip
    texts = [b["content"] if isinstance(b["content"], str) else b["content"][0]["text"] for b in results]
    assert json.loads(texts[0]) == {"sum": 3} and "Please greet Bo warmly." in texts[1]


def test_a_repl_session_reuses_one_server_across_turns_and_stops_it_at_exit(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path
) -> None:
    server = fake_model_server
    write_config(hermes_home, {"local": stdio_server(marks)})
    server.tool_calls(("mcp_local_echo", {"text": "one"}))
    server.reply("first")
    server.tool_calls(("mcp_local_echo", {"text": "two"}))
    server.reply("second")
    result = hermes_chat(input="turn one\n/new\nturn two\n/exit\n", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "first" in result.stdout and "second" in result.stdout
    assert list(tool_results(server).values()) == ["echo: two"]
    (child,) = pids(marks)  # one process served both turns and both sessions
    assert wait_for(lambda: not alive(child), 10), f"MCP server {child} outlived hermes"


def test_a_server_that_never_answers_times_out_at_start_and_is_stopped(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    server = fake_model_server
    pid_file = tmp_path / "mute.pid"
    mute = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"
    write_config(hermes_home, {"mute": {"command": sys.executable, "args": ["-c", mute, str(pid_file)], "connect_timeout": 2}})
    server.reply("no tools needed")
    started = time.monotonic()
    result = hermes_chat("-q", "hi", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "no tools needed\n" and time.monotonic() - started < 60
    (warning,) = [line for line in result.stderr.splitlines() if "mute" in line]
    assert "did not start: no answer within 2s (connect_timeout)" in warning
    assert not any(name.startswith("mcp_mute") for name in offered(server))
    # Whether or not it got as far as writing its PID, no process with its command line survives.
    assert wait_for(lambda: not running_with(str(pid_file)), 10)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_tool_added_mid_session_is_offered_on_the_next_step(
    fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path, marks: Path, transport: str
) -> None:
    """``notifications/tools/list_changed``: the server adds ``shout`` during a call; the next model step is offered it and can call it."""
    server = fake_model_server
    with http_demo(tmp_path, marks) as url:
        spec = stdio_server(marks) if transport == "stdio" else {"url": url}
        write_config(hermes_home, {"demo": spec})
        server.tool_calls(("mcp_demo_grow", {}))
        server.tool_calls(("mcp_demo_shout", {"text": "louder"}))
        server.reply("It shouted.")
        result = hermes_chat("-q", "grow a tool and use it", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It shouted.\n"
    assert "mcp_demo_grow" in offered(server, 0) and "mcp_demo_shout" not in offered(server, 0)
    assert "mcp_demo_shout" in offered(server, 1)  # re-listed after the notification, before the next step
    assert offered(server, 1)["mcp_demo_shout"]["parameters"]["required"] == ["text"]
    results = tool_results(server)
    assert list(results.values()) == ["added shout", "LOUDER"]
