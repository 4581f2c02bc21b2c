"""Small CLI faults a hostile or unlucky world finds, each through the real CLI in a subprocess.

Each test checks the exit code, what the screen says, what is stored, and
that the next command still works.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.test_chat import chat_env, hermes_chat, workdir  # noqa: F401


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_endless_files_and_inputs_are_refused_after_the_limit(fake_model_server: FakeModelServer, workdir: Path) -> None:
    env = chat_env(fake_model_server)
    attached = hermes_chat("-q", "read this", "--file", "/dev/zero", env=env, cwd=workdir, timeout=60)
    assert attached.returncode == 2
    assert "--file /dev/zero holds more than the 8 MB that can be attached" in _one_line(attached.stderr)
    with open("/dev/zero", "rb") as zero:
        piped = subprocess.run([sys.executable, "-m", "hermes.kernel", "chat", "-q", "-"], stdin=zero,
                               capture_output=True, text=True, env=env, cwd=workdir, timeout=120)  # fmt: skip
    assert piped.returncode == 2 and "standard input holds more than 64M characters" in _one_line(piped.stderr)
    assert fake_model_server.requests == []  # nothing was sent
    fake_model_server.reply("fine")
    assert hermes_chat("-q", "hello", env=env, cwd=workdir).stdout == "fine\n"


def _sigint_one_shot(server: FakeModelServer, env: dict[str, str], cwd: Path, presses: int) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "chat", "-q", "go"], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the model call is waiting on the server
    for _ in range(presses):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.15)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("presses", [1, 2, 3])
def test_ctrl_c_in_a_one_shot_always_exits_130_naming_the_session_to_resume(
    fake_model_server: FakeModelServer, workdir: Path, hermes_home: Path, presses: int
) -> None:
    fake_model_server.fault("slow_stream", seconds=30, message="words arrive slowly")
    env = {**chat_env(fake_model_server), "HERMES_HOME": str(hermes_home)}
    result = _sigint_one_shot(fake_model_server, env, workdir, presses)
    assert result.returncode == 130, (result.returncode, result.stderr)  # never -2: later presses cannot kill the exit
    assert "send another message" not in result.stderr and "Traceback" not in result.stderr
    assert "interrupted; what was done is saved: continue with `hermes chat --resume" in result.stderr
    session_id = result.stderr.split("--resume ")[1].split()[0]
    fake_model_server.script.clear()
    fake_model_server.reply("continued")
    follow = hermes_chat("--resume", session_id, "-q", "go on", env=env, cwd=workdir)
    assert (follow.returncode, follow.stdout) == (0, "continued\n"), follow.stderr


def test_ctrl_c_during_compress_keeps_the_repl(fake_model_server: FakeModelServer, workdir: Path, hermes_home: Path) -> None:
    from hermes.kernel.testing import Fault

    for n in range(15):
        fake_model_server.reply(f"answer {n}: " + "details " * 60)
    fake_model_server.lane("<conversation>", Fault("hang", seconds=20))  # the summary call of /compress
    env = {**chat_env(fake_model_server), "HERMES_HOME": str(hermes_home), "HERMES_MODEL__CONTEXT_LENGTH": "8000"}
    proc = subprocess.Popen([sys.executable, "-m", "hermes.kernel", "chat", "--repl"], env=env, cwd=workdir,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write("".join(f"question {n}\n" for n in range(14)) + "/compress\n")
    proc.stdin.flush()

    def summarising() -> bool:
        return any("<conversation>" in json.dumps(r.messages) for r in fake_model_server.requests)

    deadline = time.monotonic() + 60
    while not summarising() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert summarising(), "the summary call never started"
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.stdin.write("question 14\n/exit\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert time.monotonic() - sent < 15  # the hanging summary call was abandoned, not waited out
    assert "interrupting the command" in err and "Traceback" not in err
    assert "answer 13" in out and "answer 14" in out  # the REPL answered the message after the Ctrl-C


def test_unknown_config_keys_are_named_at_run_time(fake_model_server: FakeModelServer, workdir: Path, hermes_home: Path) -> None:
    hermes_home.mkdir(parents=True, exist_ok=True)
    (hermes_home / "config.yaml").write_text("modle:\n  name: gpt-x\nagent:\n  max_iteratoins: 3\n")
    fake_model_server.reply("answered")
    result = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=workdir)
    assert result.returncode == 0 and result.stdout == "answered\n", result.stderr
    assert "unknown key 'modle' (did you mean model?); it is ignored" in result.stderr
    assert "unknown key 'agent.max_iteratoins' (did you mean agent.max_iterations?)" in result.stderr
    (hermes_home / "config.yaml").write_text("agent:\n  max_iterations: 3\n")
    fake_model_server.reply("clean")
    clean = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=workdir)
    assert clean.stdout == "clean\n" and "unknown key" not in clean.stderr


def test_a_state_db_that_is_a_folder_is_named_and_doctor_fix_moves_it_aside(hermes, hermes_home: Path) -> None:
    (hermes_home / "state.db").mkdir(parents=True)
    (hermes_home / "state.db" / "keep.txt").write_text("mine")
    listed = hermes("sessions", "list")
    assert listed.returncode == 1
    assert "state.db is a folder, not a database file; `hermes doctor --fix` moves it aside" in _one_line(listed.stderr)
    doctor = hermes("doctor")
    assert "it is a folder, not a database file" in doctor.stdout + doctor.stderr
    assert "disk I/O error" not in doctor.stdout + doctor.stderr
    fixed = hermes("doctor", "--fix")
    assert "moved it to state.db.not-a-database-" in fixed.stdout + fixed.stderr
    (moved,) = [p for p in hermes_home.iterdir() if p.name.startswith("state.db.not-a-database-")]
    assert (moved / "keep.txt").read_text() == "mine"  # nothing deleted
    after = hermes("sessions", "list")
    assert after.returncode == 0 and "no sessions" in after.stdout + after.stderr


def test_tool_labels_are_redacted_before_they_are_cut(fake_model_server: FakeModelServer, workdir: Path) -> None:
    token = "ghp_" + "Q7" * 18
    fake_model_server.tool_calls(("read_file", {"path": "x" * 50 + ".txt", "note": token})).reply("done")
    result = hermes_chat("-q", "go", env=chat_env(fake_model_server), cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "ghp_" not in result.stderr and "Q7Q7" not in result.stderr
    assert "read_file" in result.stderr


def test_a_cooldown_set_by_a_clock_a_day_ahead_does_not_lock_the_key(
    fake_model_server: FakeModelServer, hermes, workdir: Path, hermes_home: Path
) -> None:
    from hermes.kernel.credentials.store import key_id

    key = "sk-test-key-0123456789abcdef"
    wrong = time.time() + 86_400  # the clock was a day ahead when the key was cooled for a minute
    (hermes_home / "auth.json").parent.mkdir(parents=True, exist_ok=True)
    (hermes_home / "auth.json").write_text(json.dumps({"version": 1, "credentials": {}, "state": {
        key_id(key): {"exhausted_until": wrong + 60, "cooldown": 60.0, "reason": "rate_limit", "status": 429}}}))
    os.chmod(hermes_home / "auth.json", 0o600)
    fake_model_server.reply("usable")
    result = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=workdir)
    assert (result.returncode, result.stdout) == (0, "usable\n"), result.stderr


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 3 MB tmpfs (CI runs as root): a disk that can really be filled."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True, text=True)
    assert done.returncode == 0, f"cannot mount a tmpfs (the suite runs as root in CI): {done.stderr}"
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_named_and_reading_commands_still_work(
    fake_model_server: FakeModelServer, hermes, workdir: Path, tiny_disk: Path, monkeypatch
) -> None:

    home = tiny_disk / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    store = SQLiteSessionStore(home / "state.db")
    session = store.create_session(title="before the disk filled")
    store.append_messages(session, [{"role": "user", "content": "a needle in the store"}])
    store.close()
    filler = tiny_disk / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)  # until the disk is full
    listed = hermes("sessions", "list")
    assert listed.returncode == 0 and "before the disk filled" in listed.stdout, listed.stderr
    found = hermes("sessions", "search", "needle")
    assert found.returncode == 0 and session in found.stdout, found.stderr
    fake_model_server.reply("never sent")
    chat = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=workdir)
    assert chat.returncode == 1
    line = chat.stderr.strip().splitlines()[-1]
    assert f"the disk holding {home} is full; free some space" in line and "bug" not in chat.stderr
    filler.unlink()
    again = hermes_chat("-q", "hi", env=chat_env(fake_model_server), cwd=workdir)
    assert (again.returncode, again.stdout) == (0, "never sent\n"), again.stderr
    assert session in hermes("sessions", "list").stdout  # nothing lost

