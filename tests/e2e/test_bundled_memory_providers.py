"""Hermes Agent 0.19.0's eight bundled memory providers, run unchanged through the real ``hermes`` CLI.

The provider folders come from the real release on PyPI (``tests/hermes_agent.py``),
copied into a test home's ``plugins/`` as a Hermes Agent user would; chats
go to the fake model server. Providers whose service is a cloud account are
loaded, offered and left out with one line when unconfigured or missing
their SDK; holographic (local SQLite) is driven through a whole
store-then-recall conversation.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.hermes_agent import LATEST, release_path

#: The memory providers bundled with Hermes Agent 0.19.0, and the tools each offers once loaded.
BUNDLED = {
    "byterover": ["brv_curate", "brv_query", "brv_status"],
    "hindsight": ["hindsight_recall", "hindsight_reflect", "hindsight_retain"],
    "holographic": ["fact_feedback", "fact_store"],
    "honcho": ["honcho_conclude", "honcho_context", "honcho_profile", "honcho_reasoning", "honcho_search"],
    "mem0": ["mem0_add", "mem0_delete", "mem0_search", "mem0_update"],
    "openviking": ["viking_add_resource", "viking_browse", "viking_forget", "viking_read", "viking_remember",
                   "viking_search"],
    "retaindb": ["retaindb_context", "retaindb_delete_file", "retaindb_forget", "retaindb_ingest_file",
                 "retaindb_list_files", "retaindb_profile", "retaindb_read_file", "retaindb_remember",
                 "retaindb_search", "retaindb_upload_file"],
    "supermemory": ["supermemory-forget", "supermemory-profile", "supermemory-save", "supermemory-search",
                    "supermemory_forget", "supermemory_profile", "supermemory_search", "supermemory_store"],
}  # fmt: skip


@pytest.fixture(scope="module")
def bundled() -> Path:
    """The ``plugins/memory`` folder of the real Hermes Agent release."""
    folder = release_path(LATEST) / "plugins" / "memory"
    assert sorted(p.name for p in folder.iterdir() if (p / "plugin.yaml").is_file()) == sorted(BUNDLED)
    return folder


@pytest.fixture
def home(tmp_path: Path, bundled: Path) -> Path:
    """A Hermes home with all eight provider folders in ``plugins/``."""
    path = tmp_path / "home"
    for name in BUNDLED:
        shutil.copytree(bundled / name, path / "plugins" / name, ignore=shutil.ignore_patterns("__pycache__"))
    return path


@pytest.fixture
def run(tmp_path: Path, home: Path, fake_model_server: FakeModelServer):
    """``run(*args, extra=None)``: the real CLI with this home, pointed at the fake model server."""
    work = tmp_path / "project"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "RETAINDB_", "MEM0_"))}
    env.update(
        HERMES_HOME=str(home), OPENAI_API_KEY="sk-test-key-0123456789abcdef",
        OPENAI_BASE_URL=fake_model_server.openai_base_url, HERMES_MODEL__PROVIDER="openai",
        HERMES_MODEL__NAME="test-model", HERMES_MODEL__TIMEOUT="10", HERMES_LOAD_PLUGINS=",".join(BUNDLED),
    )  # fmt: skip

    def invoke(*args: str, extra: dict[str, str] | None = None, input: str | None = None):
        return subprocess.run(
            [sys.executable, "-m", "hermes.kernel", *args], capture_output=True, text=True,
            env={**env, **(extra or {})}, cwd=work, timeout=120, input=input,
        )  # fmt: skip

    return invoke


def tool_names(body: dict) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


def test_all_eight_load_and_doctor_says_which_one_a_chat_would_leave_out(run, home: Path) -> None:
    listed = run("plugin", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout) if r["group"] == "hermes.memory_providers"}
    assert {n: (rows[n]["kind"], rows[n]["error"]) for n in BUNDLED} == dict.fromkeys(BUNDLED, ("folder", None))

    for name in ("holographic", "honcho"):
        assert run("config", "set", "memory.provider", name).returncode == 0
        doctor = run("doctor", "--json")
        report = json.loads(doctor.stdout)
        memory = [p for p in report["problems"] if p.startswith("memory:")]
        if name == "holographic":
            assert memory == []
        else:  # imported for real (no missing host module), then not configured: said once, truthfully
            assert memory == [
                "memory: memory provider 'honcho' would be left out of chats: its is_available() returned False; "
                "check `hermes memory setup honcho` and its dependencies"
            ]
            assert doctor.returncode == 1 and "WARNING" not in doctor.stderr


def test_unconfigured_cloud_providers_are_one_line_and_the_chat_runs_without_them(
    run, fake_model_server: FakeModelServer
) -> None:
    for name in ("honcho", "openviking", "supermemory"):
        assert run("config", "set", "memory.provider", name).returncode == 0
        fake_model_server.reply("fine")
        chat = run("chat", "-q", "hello")
        assert chat.returncode == 0, chat.stderr
        assert chat.stdout.strip() == "fine"
        lines = [x for x in chat.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and f"memory provider {name!r} is not available" in lines[0], chat.stderr
        assert "Traceback" not in chat.stderr
        assert not tool_names(fake_model_server.requests[-1].body) & set(BUNDLED[name])


def test_fault_table_a_provider_whose_sdk_is_not_installed_is_one_line(run, home: Path, fake_model_server) -> None:
    # mem0 is configured (an API key), but its SDK (mem0ai) is not installed here: hermes-kernel never
    # pip-installs at run time, so the provider is left out with the command that installs it.
    (home / "mem0.json").write_text(json.dumps({"api_key": "m0-key-0123456789"}))
    assert run("config", "set", "memory.provider", "mem0").returncode == 0
    fake_model_server.reply("still here")
    chat = run("chat", "-q", "hello")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip() == "still here"
    lines = [x for x in chat.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "memory provider 'mem0' is not available" in lines[0], chat.stderr
    assert "feature 'memory.mem0' is not installed" in lines[0] and "pip install mem0ai" in lines[0]
    assert "Traceback" not in chat.stderr and "m0-key-0123456789" not in chat.stderr
    assert not tool_names(fake_model_server.requests[-1].body) & set(BUNDLED["mem0"])
    # doctor says the same as the chat: the provider loads, and a chat leaves it out for the missing SDK.
    doctor = run("doctor", "--json")
    (problem,) = [p for p in json.loads(doctor.stdout)["problems"] if p.startswith("memory:")]
    assert "'mem0' would be left out of chats" in problem and "pip install mem0ai" in problem
    assert doctor.returncode == 1 and "m0-key-0123456789" not in doctor.stdout + doctor.stderr


def test_holographic_stores_with_its_tool_and_recalls_in_the_next_session_in_the_profile_home(
    run, home: Path, fake_model_server: FakeModelServer
) -> None:
    server = fake_model_server
    assert run("profile", "create", "work").returncode == 0
    profile = home / "profiles" / "work"
    shutil.copytree(home / "plugins" / "holographic", profile / "plugins" / "holographic")
    work = {"HERMES_PROFILE": "work"}
    assert run("config", "set", "memory.provider", "holographic", extra=work).returncode == 0

    server.tool_calls(("fact_store", {"action": "add", "content": "The deploy window is Tuesday at 14:00"}))
    server.reply("Noted.")
    first = run("chat", "-q", "Remember: deploys happen Tuesday 14:00", extra=work)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Noted."
    assert {"fact_store", "fact_feedback"} <= tool_names(server.requests[0].body)
    result = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert json.loads(result[0]["content"]).get("status") == "added", result

    # The provider was initialised for the profile's home, not the default one (a planted bug).
    assert (profile / "memory_store.db").is_file() and not (home / "memory_store.db").exists()
    # Its data is the user's memory: private files (a planted bug wrote it world-readable).
    for path in profile.glob("memory_store.db*"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path

    server.tool_calls(("fact_store", {"action": "search", "query": "deploy window"}))
    server.reply("Tuesday at 14:00.")
    second = run("chat", "-q", "When do deploys happen?", extra=work)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Tuesday at 14:00."
    found = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "The deploy window is Tuesday at 14:00" in found[-1]["content"]


def files(home: Path) -> dict[str, bytes]:
    """Every file of the home but plugin code and lock files (empty, left by any command), with its bytes."""
    return {
        str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
        if p.is_file() and "plugins" not in p.parts and not p.name.endswith(".lock")
    }  # fmt: skip


def test_setup_runs_a_providers_own_wizard_instead_of_the_schemas_questions(run, home: Path) -> None:
    # Its wizard probes the service at the end: pointed at a closed loopback port, never the real one.
    setup = run("memory", "setup", "supermemory", input="sm-secret-key-0123456789\n",
                extra={"SUPERMEMORY_BASE_URL": "http://127.0.0.1:9"})  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    assert "Configuring supermemory" in setup.stdout  # its own wizard asked
    assert "(api_key, hidden" not in setup.stdout and "is set up:" not in setup.stdout  # the schema walk did not
    assert (home / ".env").read_text().splitlines() == ["SUPERMEMORY_API_KEY=sm-secret-key-0123456789"]
    assert stat.S_IMODE((home / ".env").stat().st_mode) == 0o600
    assert "provider: supermemory" in (home / "config.yaml").read_text()
    assert "sm-secret-key-0123456789" not in setup.stdout + setup.stderr


def test_setup_with_values_walks_the_schema_and_asks_only_what_its_when_conditions_select(run, home: Path) -> None:
    # hindsight's schema has fields for three modes; --set mode=cloud must skip the other modes' fields,
    # and its save_config (atomic_json_write(..., mode=0o600)) must work.
    setup = run("memory", "setup", "hindsight", "--set", "mode=cloud", "--set", "api_key=hs-key-0123456789",
                input="\n" * 40)  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    assert "(llm_provider)" not in setup.stdout and "(idle_timeout)" not in setup.stdout
    assert setup.stdout.count("(api_url)") == 1 and "Hindsight Cloud API URL" in setup.stdout
    saved = home / "hindsight" / "config.json"
    assert json.loads(saved.read_text())["mode"] == "cloud" and "llm_model" not in json.loads(saved.read_text())
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert "HINDSIGHT_API_KEY=hs-key-0123456789" in (home / ".env").read_text()
    assert "hs-key-0123456789" not in setup.stdout + setup.stderr


def test_fault_table_setup_cancelled_halfway_writes_nothing(run, home: Path) -> None:
    assert run("config", "set", "memory.provider", "holographic").returncode == 0
    before = files(home)
    # hindsight's own wizard: the mode is chosen, then input ends at the API key (Ctrl-C does the same).
    wizard = run("memory", "setup", "hindsight", input="1\n")
    assert wizard.returncode == 1
    assert wizard.stderr.strip().splitlines()[-1] == (
        "error: setup of memory provider 'hindsight' was cancelled; nothing was saved"
    )
    assert "Traceback" not in wizard.stderr
    # byterover has no wizard: its schema walk ends after the first answer.
    schema = run("memory", "setup", "byterover", input="brv-key-0123\n")
    assert schema.returncode != 0 and "Traceback" not in schema.stderr
    assert files(home) == before


class FakeRetainDB(ThreadingHTTPServer):
    """RetainDB's HTTP API on loopback, only the endpoints the provider calls: memories kept in a list."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _RetainHandler)
        self.memories: list[dict] = []
        self.calls: list[tuple[str, str, str]] = []  # method, path, API key

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _RetainHandler(BaseHTTPRequestHandler):
    server: FakeRetainDB

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        self.server.calls.append(("POST", path, self.headers.get("X-API-Key", "")))
        body = self._body()
        if path == "/v1/memory":
            memory = {"id": f"m{len(self.server.memories) + 1}", "content": body["content"],
                      "user_id": body["user_id"], "project": body["project"]}  # fmt: skip
            self.server.memories.append(memory)
            return self._send(200, {"id": memory["id"], "status": "stored"})
        if path == "/v1/memory/search":
            words = set(str(body.get("query", "")).lower().split())
            hits = [m for m in self.server.memories if words & set(m["content"].lower().split())]
            return self._send(200, {"results": hits})
        if path in ("/v1/context/query", "/v1/memory/ingest/session") or path.endswith(("/ask", "/seed")):
            return self._send(200, {"context": "", "memories": [], "ok": True})
        self._send(404, {"error": f"no endpoint {path}"})

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.server.calls.append(("GET", path, self.headers.get("X-API-Key", "")))
        self._send(200, {"memories": [], "profile": {}})


@pytest.fixture
def retaindb():
    server = FakeRetainDB()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_retaindb_stores_through_its_service_and_recalls_in_the_next_session(
    run, home: Path, fake_model_server: FakeModelServer, retaindb: FakeRetainDB
) -> None:
    server = fake_model_server
    service = {"RETAINDB_API_KEY": "rdb-key-0123456789", "RETAINDB_BASE_URL": retaindb.url}
    assert run("config", "set", "memory.provider", "retaindb").returncode == 0

    server.tool_calls(("retaindb_remember", {"content": "The staging database is called heron"}))
    server.reply("Stored.")
    first = run("chat", "-q", "Remember that staging is heron", extra=service)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Stored."
    assert set(BUNDLED["retaindb"]) <= tool_names(server.requests[0].body)
    assert "# RetainDB Memory" in server.requests[0].body["messages"][0]["content"]
    assert [m["content"] for m in retaindb.memories] == ["The staging database is called heron"]
    assert ("POST", "/v1/memory", "rdb-key-0123456789") in retaindb.calls

    server.tool_calls(("retaindb_search", {"query": "staging database"}))
    server.reply("It is heron.")
    second = run("chat", "-q", "What is staging called?", extra=service)
    assert second.returncode == 0, second.stderr
    found = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "The staging database is called heron" in found[-1]["content"]
    assert "rdb-key-0123456789" not in first.stderr + second.stderr + second.stdout


def test_fault_table_a_provider_whose_service_is_down_costs_the_chat_nothing(
    run, fake_model_server: FakeModelServer
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{sock.getsockname()[1]}"
    service = {"RETAINDB_API_KEY": "rdb-key-0123456789", "RETAINDB_BASE_URL": down}
    assert run("config", "set", "memory.provider", "retaindb").returncode == 0
    fake_model_server.tool_calls(("retaindb_search", {"query": "anything"}))
    fake_model_server.reply("Carrying on.")
    chat = run("chat", "-q", "hello", extra=service)
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip() == "Carrying on."
    said = [x for x in chat.stderr.splitlines() if x.strip() and not x.strip().startswith(("→", "✓", "✗"))]
    assert "Traceback" not in chat.stderr and len(said) <= 1, chat.stderr  # beside the tool's progress lines
    (result,) = [m for m in fake_model_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "error" in result["content"].lower()  # the model is told the tool failed; the turn goes on


#: A stand-in for ByteRover's ``brv`` command (the provider's whole "service"): curate appends to a file in its
#: working folder, query prints the stored lines sharing a word with the query.
FAKE_BRV = """#!{python}
import pathlib, sys
store = pathlib.Path.cwd() / "fake-brv.txt"
command, text = sys.argv[1], sys.argv[-1]
if command == "curate":
    with store.open("a") as fh:
        fh.write(text + "\\n")
elif command == "query":
    words = set(text.lower().split())
    lines = store.read_text().splitlines() if store.exists() else []
    print("\\n".join(line for line in lines if words & set(line.lower().split())))
elif command == "status":
    print("ok")
"""


def test_byterover_curates_with_its_cli_in_the_profile_home_and_queries_it_next_session(
    run, home: Path, tmp_path: Path, fake_model_server: FakeModelServer
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    brv = bin_dir / "brv"
    brv.write_text(FAKE_BRV.format(python=sys.executable))
    brv.chmod(0o755)
    path = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    server = fake_model_server
    assert run("config", "set", "memory.provider", "byterover").returncode == 0

    server.tool_calls(("brv_curate", {"content": "The release train leaves on Thursdays"}))
    server.reply("Curated.")
    first = run("chat", "-q", "Note the release train day", extra=path)
    assert first.returncode == 0, first.stderr
    assert set(BUNDLED["byterover"]) <= tool_names(server.requests[0].body)
    assert "# ByteRover Memory" in server.requests[0].body["messages"][0]["content"]
    stored = home / "byterover" / "fake-brv.txt"  # brv ran in the provider's folder of this home
    assert "The release train leaves on Thursdays" in stored.read_text()
    assert stat.S_IMODE((home / "byterover").stat().st_mode) == 0o700

    server.tool_calls(("brv_query", {"query": "when does the release train leave"}))
    server.reply("Thursdays.")
    second = run("chat", "-q", "When does the release train leave?", extra=path)
    assert second.returncode == 0, second.stderr
    found = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "The release train leaves on Thursdays" in found[-1]["content"]


class FakeSupermemory(FakeRetainDB):
    """Supermemory's HTTP API on loopback (documents add, memory search, profile, conversations)."""

    def __init__(self) -> None:
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", 0), _SupermemoryHandler)
        self.memories: list[dict] = []
        self.calls: list[tuple[str, str, str]] = []


class _SupermemoryHandler(_RetainHandler):
    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        self.server.calls.append(("POST", path, self.headers.get("Authorization", "")))
        body = self._body()
        if path == "/v3/documents":
            memory = {"id": f"d{len(self.server.memories) + 1}", "memory": body["content"], "similarity": 0.9,
                      "updatedAt": "2026-12-01T00:00:00Z"}  # fmt: skip
            self.server.memories.append(memory)
            return self._send(200, {"id": memory["id"], "status": "queued"})
        if path == "/v4/search":
            words = set(str(body.get("q", "")).lower().split())
            hits = [m for m in self.server.memories if words & set(m["memory"].lower().split())]
            return self._send(200, {"results": hits, "timing": 1.0, "total": len(hits)})
        if path == "/v4/profile":
            return self._send(200, {"profile": {"static": [], "dynamic": []}})
        if path == "/v4/conversations":
            return self._send(200, {"id": "c1", "status": "ok"})
        self._send(404, {"error": f"no endpoint {path}"})


def test_supermemory_with_its_sdk_stores_and_recalls_through_its_service(
    run, home: Path, fake_model_server: FakeModelServer
) -> None:
    service = FakeSupermemory()
    threading.Thread(target=service.serve_forever, daemon=True).start()
    try:
        env = {"SUPERMEMORY_API_KEY": "sm-key-0123456789", "SUPERMEMORY_BASE_URL": service.url}
        server = fake_model_server
        assert run("config", "set", "memory.provider", "supermemory").returncode == 0
        server.tool_calls(("supermemory_store", {"content": "Our on-call rotation changes on Mondays"}))
        server.reply("Saved.")
        first = run("chat", "-q", "Remember when on-call changes", extra=env)
        assert first.returncode == 0, first.stderr
        assert {"supermemory_store", "supermemory_search"} <= tool_names(server.requests[0].body)
        assert [m["memory"] for m in service.memories] == ["Our on-call rotation changes on Mondays"]
        assert ("POST", "/v3/documents", "Bearer sm-key-0123456789") in service.calls

        server.tool_calls(("supermemory_search", {"query": "on-call rotation"}))
        server.reply("Mondays.")
        second = run("chat", "-q", "When does on-call change?", extra=env)
        assert second.returncode == 0, second.stderr
        found = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
        assert "Our on-call rotation changes on Mondays" in found[-1]["content"]
        assert "sm-key-0123456789" not in first.stderr + second.stderr + second.stdout
    finally:
        service.shutdown()
        service.server_close()


def test_honcho_configured_without_its_sdk_is_one_line_and_the_chat_runs(run, fake_model_server) -> None:
    # The case that made `hermes chat` exit 1 while doctor said every plugin loaded.
    assert run("config", "set", "memory.provider", "honcho").returncode == 0
    fake_model_server.reply("here")
    chat = run("chat", "-q", "hello", extra={"HONCHO_API_KEY": "hc-key-0123456789"})
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip() == "here"
    (line,) = [x for x in chat.stderr.splitlines() if x.strip()]
    assert "memory provider 'honcho' is not available" in line and "pip install honcho-ai" in line
    assert not tool_names(fake_model_server.requests[-1].body) & set(BUNDLED["honcho"])
    assert "hc-key-0123456789" not in chat.stderr


def test_an_empty_memory_section_in_config_yaml_is_an_empty_section_not_a_crash(run, home: Path, fake_model_server) -> None:
    (home / "config.yaml").write_text("memory:\n", encoding="utf-8")  # a level with nothing under it
    fake_model_server.reply("ok")
    chat = run("chat", "-q", "hello")
    assert chat.returncode == 0 and chat.stdout.strip() == "ok", chat.stderr
    assert "is a section" not in chat.stderr and "Traceback" not in chat.stderr
    assert run("config", "set", "memory.provider", "holographic").returncode == 0
    assert "provider: holographic" in (home / "config.yaml").read_text()
