"""What the user types, met through the real CLI: slash commands, one-shot prompts, files, huge inputs."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, db_rows, hermes_chat


def test_title_with_a_stray_quote_does_not_crash_the_repl(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    fake_model_server.reply("first").reply("second")
    result = hermes_chat(input="hello\n/title it's mine\n/title \"quoted title\" here\nagain\n/exit\n",
                         env=chat_env(fake_model_server), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "title: it's mine" in result.stderr and "title: quoted title here" in result.stderr
    assert "Traceback" not in result.stderr and "second" in result.stdout
    assert db_rows(hermes_home, "SELECT title FROM sessions") == [("quoted title here",)]


def test_double_slash_sends_a_message_that_starts_with_a_slash(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    fake_model_server.reply("that is the hosts file")
    result = hermes_chat(input="/etc/hosts what is this?\n//etc/hosts what is this?\n/exit\n",
                         env=chat_env(fake_model_server), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "unknown command /etc/hosts; /help lists them" in result.stderr
    assert "type it as ///etc/hosts what is this?" not in result.stderr and "//etc/hosts what is this?" in result.stderr
    (request,) = fake_model_server.requests  # the unknown command sent nothing
    assert request.body["messages"][-1]["content"] == "/etc/hosts what is this?"


def test_empty_prompt_is_refused(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    for args, stdin in ((("-q", ""), None), (("-q", "   "), None), (("-q", "-"), "")):
        result = hermes_chat(*args, input=stdin, env=chat_env(fake_model_server), cwd=tmp_path)
        assert result.returncode == 2 and result.stderr.startswith("error: the message is empty"), result.stderr
    assert fake_model_server.requests == [] and not (hermes_home / "state.db").exists()


def test_q_dash_and_file_read_the_prompt(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    fake_model_server.reply("from stdin").reply("from a file")
    result = hermes_chat("-q", "-", input="summarise this\nsecond line\n", env=chat_env(fake_model_server), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "from stdin\n"), result.stderr
    assert fake_model_server.requests[0].body["messages"][-1]["content"] == "summarise this\nsecond line"
    (tmp_path / "notes.txt").write_text("line one\nline two\n")
    result = hermes_chat("-q", "what is in it?", "--file", "notes.txt", env=chat_env(fake_model_server), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "from a file\n"), result.stderr
    sent = fake_model_server.requests[1].body["messages"][-1]["content"]
    assert sent.startswith("what is in it?") and '<file name="notes.txt">\nline one\nline two\n\n</file>' in sent


@pytest.mark.parametrize("content,message", [
    (b"\xff\xfe binary", "is not UTF-8 text (byte 0)"),
    (None, "does not exist"),
    (b"a\x00b", "looks binary"),
])  # fmt: skip
def test_bad_file_is_one_line(fake_model_server: FakeModelServer, tmp_path: Path, content: bytes | None, message: str) -> None:
    if content is not None:
        (tmp_path / "f.bin").write_bytes(content)
    result = hermes_chat("-q", "look", "--file", "f.bin", env=chat_env(fake_model_server), cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and message in result.stderr
    assert fake_model_server.requests == []


def test_huge_prompt_from_stdin_is_refused_before_any_request(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    huge = "word " * 1_000_000  # 5 MB: more than fits in any argument list, and any context window
    result = hermes_chat("-q", "-", input=huge, env=chat_env(fake_model_server), cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "refused before sending: the message is about 1,249,999 tokens" in result.stderr
    assert fake_model_server.requests == []
    assert not (hermes_home / "state.db").exists() or db_rows(hermes_home, "SELECT count(*) FROM messages") == [(0,)]
    fake_model_server.reply("short is fine")
    repl = hermes_chat(input=huge.strip() + "\nshort question\n/exit\n", env=chat_env(fake_model_server), cwd=tmp_path)
    assert repl.returncode == 0 and "refused before sending" in repl.stderr and "short is fine" in repl.stdout
    assert len(fake_model_server.requests) == 1


def test_export_to_a_missing_folder_is_one_line(fake_model_server: FakeModelServer, tmp_path: Path, hermes) -> None:
    fake_model_server.reply("hi")
    assert hermes_chat("-q", "hello", env=chat_env(fake_model_server), cwd=tmp_path).returncode == 0
    sid = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    result = hermes("sessions", "export", sid, "--output", str(tmp_path / "missing" / "dir" / "x.jsonl"))
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "cannot write" in result.stderr and "its folder exists" in result.stderr and "Traceback" not in result.stderr
    ok = hermes("sessions", "export", sid, "--output", str(tmp_path / "x.jsonl"))
    assert ok.returncode == 0 and (tmp_path / "x.jsonl").read_text().startswith("{")


def test_could_not_connect_is_said_once(tmp_path: Path, hermes_home: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with FakeModelServer() as server:
        base = chat_env(server)
    env = {**base, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "HERMES_RETRIES__MAX_ATTEMPTS": "1"}
    result = hermes_chat("-q", "hi", env=env, cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("could not connect to the model API") == 1, result.stderr
    assert "dropped before the response" not in result.stderr and "Traceback" not in result.stderr
    assert db_rows(hermes_home, "SELECT role, content FROM messages") == [("user", "hi")]  # nothing lost


def test_piped_stdin_without_q_answers_once(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    """``echo ... | hermes chat`` answers the piped text once, like ``-q -``; nothing of it runs as a REPL line."""
    fake_model_server.reply("answered once")
    piped = "/help is not a command here\nsecond line\n"
    result = hermes_chat(input=piped, repl=False, env=chat_env(fake_model_server), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "answered once\n"), result.stderr
    (request,) = fake_model_server.requests
    assert request.body["messages"][-1]["content"] == "/help is not a command here\nsecond line"
    assert db_rows(hermes_home, "SELECT role, content FROM messages WHERE role != 'system' ORDER BY id") == [
        ("user", "/help is not a command here\nsecond line"), ("assistant", "answered once")]  # fmt: skip
    assert "/help lists" not in result.stderr and "bye" not in result.stdout.lower()


def test_empty_pipe_is_refused_and_names_repl(fake_model_server: FakeModelServer, tmp_path: Path, hermes_home: Path) -> None:
    for stdin in ("", "  \n\n"):
        result = hermes_chat(input=stdin, repl=False, env=chat_env(fake_model_server), cwd=tmp_path)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith("error: the message is empty") and "--repl" in result.stderr
    mixed = hermes_chat("--repl", "-q", "hi", env=chat_env(fake_model_server), cwd=tmp_path)
    assert mixed.returncode == 2 and mixed.stderr == "error: --repl starts the REPL; drop -q/--file to use it, or drop --repl to answer once\n"
    assert fake_model_server.requests == [] and not (hermes_home / "state.db").exists()


def test_repl_flag_reads_lines_from_a_pipe(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    fake_model_server.reply("first answer").reply("second answer")
    result = hermes_chat("--repl", input="one\ntwo\n/exit\n", env=chat_env(fake_model_server), cwd=tmp_path)
    assert result.returncode == 0 and "first answer" in result.stdout and "second answer" in result.stdout, result.stderr
    assert [r.body["messages"][-1]["content"] for r in fake_model_server.requests] == ["one", "two"]


def test_a_terminal_stdin_still_opens_the_repl(fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    """On a terminal (a pty here) a bare ``hermes chat`` is the REPL, as before: two lines, two turns."""
    import os
    import pty
    import subprocess
    import sys

    fake_model_server.reply("tty one").reply("tty two")
    main, secondary = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "chat"], stdin=secondary, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=chat_env(fake_model_server), cwd=tmp_path)  # fmt: skip
        os.close(secondary)
        os.write(main, b"one\ntwo\n/exit\n")
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(main)
    assert proc.returncode == 0, err
    assert "tty one" in out and "tty two" in out
    assert [r.body["messages"][-1]["content"] for r in fake_model_server.requests] == ["one", "two"]
