"""Memory providers written for Hermes Agent, installed as folders and driven by real ``hermes chat`` runs.

The providers under ``tests/compat/providers/`` follow Hermes's conventions
(``register(ctx)``, keyword ``session_id``, ``turn_number``, a string home, a
module that imports itself as ``plugins.memory.<name>``; ``oldnotes`` is an
older one without ``session_id``, ``messages`` or ``metadata``). Each test
installs one with ``hermes plugin install`` into a real HERMES_HOME and chats
through the real CLI and the real openai SDK against the fake server.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

PROVIDERS = Path(__file__).resolve().parents[1] / "compat" / "providers"
FENCE = "<memory-context>"


@pytest.fixture
def run(tmp_path: Path, fake_model_server: FakeModelServer):
    """``run(*args, input=None, extra=None)``: the real CLI in a project folder, pointed at the fake server."""
    work = tmp_path / "project"
    work.mkdir()
    env = {
        "OPENAI_API_KEY": "sk-test-key-0123456789abcdef",
        "OPENAI_BASE_URL": fake_model_server.openai_base_url,
        "HERMES_MODEL__PROVIDER": "openai",
        "HERMES_MODEL__NAME": "test-model",
        "HERMES_MODEL__TIMEOUT": "10",
        # Folder providers obey HERMES_LOAD_PLUGINS like distributions do (by folder name).
        "HERMES_LOAD_PLUGINS": "factbook,oldnotes,mismatch-plugin",
    }

    def invoke(*args: str, input: str | None = None, extra: dict[str, str] | None = None):
        return subprocess.run(
            [sys.executable, "-m", "hermes.kernel", *args],
            capture_output=True, text=True, env={**os.environ, **env, **(extra or {})}, cwd=work, input=input,
            timeout=120,
        )  # fmt: skip

    return invoke


def calls(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def user_turns(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def in_order(names: list[str], expected: list[str]) -> bool:
    """``expected`` occurs in ``names`` in this order (other calls may sit between)."""
    position = 0
    for name in names:
        if position < len(expected) and name == expected[position]:
            position += 1
    return position == len(expected)


def test_a_hermes_provider_folder_stores_facts_with_its_tools_and_recalls_them_fenced(
    run, fake_model_server: FakeModelServer, hermes_home: Path
) -> None:
    server = fake_model_server
    installed = run("plugin", "install", str(PROVIDERS / "factbook"))
    assert installed.returncode == 0, installed.stderr
    assert "installed folder provider factbook 1.2.0" in installed.stdout
    assert (hermes_home / "plugins" / "factbook" / "store.py").is_file()
    (row,) = [r for r in json.loads(run("plugin", "list", "--json").stdout) if r["name"] == "factbook"]
    assert (row["group"], row["kind"], row["version"], row["error"]) == ("hermes.memory_providers", "folder", "1.2.0", None)

    # Setup walks the schema (factbook has no wizard of its own): the secret goes to .env (0600), the rest
    # through save_config.
    setup = run("memory", "setup", "factbook", input="sk-fact-0123\nsometimes\nall\n2\n")
    assert setup.returncode == 0, setup.stderr
    assert "choose one of keyword, all" in setup.stderr  # a wrong choice is asked again, not saved
    assert "FACTBOOK_API_KEY=sk-fact-0123" in (hermes_home / ".env").read_text()
    assert stat.S_IMODE((hermes_home / ".env").stat().st_mode) == 0o600
    assert json.loads((hermes_home / "factbook" / "config.json").read_text()) == {"mode": "all", "max_recall": "2"}
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["memory"]["provider"] == "factbook"
    assert "sk-fact-0123" not in setup.stdout + setup.stderr

    # Session 1: the provider's tool is offered and called; the fact lands in its own store.
    server.tool_calls(("fact_store", {"action": "add", "content": "The deploy window is Tuesday at 14:00"}))
    server.reply("Noted: Tuesday at 14:00.")
    first = run("chat", "-q", "Please remember the deploy window: Tuesday 14:00")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Noted: Tuesday at 14:00."
    request = server.requests[0].body
    assert {"fact_store", "memory"} <= {t["function"]["name"] for t in request["tools"]}
    assert "# Factbook" in request["messages"][0]["content"]
    tool_result = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert json.loads(tool_result[0]["content"]) == {"fact_id": 1, "status": "added"}
    facts = json.loads((hermes_home / "factbook" / "facts.json").read_text())
    assert [f["content"] for f in facts] == ["The deploy window is Tuesday at 14:00"]

    log = calls(hermes_home / "factbook" / "calls.jsonl")
    names = [c["call"] for c in log]
    # Every hook arrives, translated, in the order of a turn.
    assert in_order(names, ["__init__", "is_available", "initialize", "on_turn_start", "prefetch",
                            "handle_tool_call", "sync_turn", "queue_prefetch"])  # fmt: skip
    assert "on_session_end" in names and names[-1] == "shutdown"
    by_name = {c["call"]: c for c in log}
    home = str(hermes_home)
    assert by_name["__init__"]["home"] == home  # the active home, already at construction time
    assert (by_name["initialize"]["hermes_home"], by_name["initialize"]["home_type"]) == (home, "str")
    assert (by_name["initialize"]["platform"], by_name["initialize"]["agent_context"]) == ("cli", "primary")
    session = by_name["initialize"]["session_id"]
    assert (by_name["on_turn_start"]["turn_number"], by_name["on_turn_start"]["platform"]) == (1, "cli")
    assert by_name["prefetch"]["session_id"] == session and by_name["sync_turn"]["session_id"] == session
    assert by_name["sync_turn"]["roles"] == ["user", "assistant", "tool", "assistant"]  # the turn's messages
    assert by_name["on_session_end"]["count"] == 4

    # Session 2: the provider's recall reaches the model fenced, in this turn's user message only.
    server.reply("It is Tuesday at 14:00.")
    second = run("chat", "-q", "When is the deploy window?")
    assert second.returncode == 0, second.stderr
    (asked,) = user_turns(server.requests[-1].body)
    assert asked.startswith(FENCE) and "- The deploy window is Tuesday at 14:00" in asked
    assert asked.endswith("</memory-context>\n\nWhen is the deploy window?")
    with sqlite3.connect(hermes_home / "state.db") as conn:
        stored = [c for (c,) in conn.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id")]
    assert FENCE not in "".join(stored)
    assert "sk-fact-0123" not in second.stderr


def test_compression_and_session_switches_reach_a_hermes_provider_translated(
    run, fake_model_server: FakeModelServer, hermes_home: Path
) -> None:
    assert run("plugin", "install", str(PROVIDERS / "factbook")).returncode == 0
    assert run("memory", "setup", "factbook", "--set", "api_key=sk-fact-0123", input="\n\n").returncode == 0
    turns = 6
    for i in range(turns + 3):  # spare replies: the summary request takes one too
        fake_model_server.reply(f"answer {i} " + "detail " * 60)
    asked = "".join(f"step {i} of the rollout plan\n" for i in range(turns))
    # A short conversation compresses only with a tail floor under the default 20 messages.
    small = {"HERMES_MODEL__CONTEXT_LENGTH": "8000", "HERMES_COMPRESSION__TARGET_RATIO": "0.05",
             "HERMES_COMPRESSION__TAIL_MIN_MESSAGES": "3"}
    repl = run("chat", "--repl", input=f"{asked}/compress\n/new\nand again\n/exit\n", extra=small)
    assert repl.returncode == 0, repl.stderr
    assert "compacted context" in repl.stderr, repl.stderr
    log = calls(hermes_home / "factbook" / "calls.jsonl")
    names = [c["call"] for c in log]
    first = next(c for c in log if c["call"] == "initialize")["session_id"]

    # on_pre_compress gets the messages and its text reaches the summary request.
    assert [c["count"] for c in log if c["call"] == "on_pre_compress"] == [2 * turns]
    summaries = [json.dumps(r.body) for r in fake_model_server.requests if "<plugin-context>" in json.dumps(r.body)]
    assert summaries and "factbook: the user keeps facts in fact_store" in summaries[-1]

    compression, reset = [c for c in log if c["call"] == "on_session_switch"]
    assert (compression["parent_session_id"], compression["reset"], compression["rewound"]) == (first, False, False)
    assert (reset["parent_session_id"], reset["reset"]) == ("", True)
    assert in_order(names, ["on_pre_compress", "on_session_switch", "on_session_end", "on_session_switch",
                            "on_turn_start", "on_session_end", "shutdown"])  # fmt: skip
    starts = [c["turn_number"] for c in log if c["call"] == "on_turn_start"]
    assert starts == [*range(1, turns + 1), 1]  # a new conversation counts from 1 again
    last = [c for c in log if c["call"] == "prefetch"][-1]
    assert last["session_id"] == reset["new_session_id"] and last["query"] == "and again"


def test_an_older_hermes_provider_without_session_id_works_from_a_git_url(
    run, fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "oldnotes-repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for source in (PROVIDERS / "oldnotes").iterdir():
        (repo / source.name).write_bytes(source.read_bytes())
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "oldnotes"], check=True)

    installed = run("plugin", "install", f"file://{repo}")
    assert installed.returncode == 0, installed.stderr
    assert "installed folder provider oldnotes 0.3.0" in installed.stdout  # named by its plugin.yaml
    assert not (hermes_home / "plugins" / "oldnotes" / ".git").exists()
    assert run("config", "set", "memory.provider", "oldnotes").returncode == 0

    fake_model_server.tool_calls(("memory", {"action": "add", "target": "user", "content": "Prefers terse answers"}))
    fake_model_server.reply("Understood.")
    first = run("chat", "-q", "Keep your answers terse from now on")
    assert first.returncode == 0, first.stderr
    log = calls(hermes_home / "oldnotes-calls.jsonl")
    assert {"call": "on_memory_write", "action": "add", "target": "user", "content": "Prefers terse answers"} in log
    assert {"call": "on_turn_start", "turn_number": 1} in log and {"call": "sync_turn"} in log
    assert "Traceback" not in first.stderr and "failed" not in first.stderr

    fake_model_server.reply("Terse it is.")
    second = run("chat", "-q", "Should your answers be terse?")
    assert second.returncode == 0, second.stderr
    (asked,) = user_turns(fake_model_server.requests[-1].body)
    assert asked.startswith(FENCE) and "remembered: Prefers terse answers" in asked


def test_a_mismatched_hook_is_one_warning_and_the_plugins_other_hooks_still_fire(
    run, fake_model_server: FakeModelServer, fake_dists
) -> None:
    fake_dists.add(
        "mismatch-plugin",
        {"hermes.plugins": {"mismatch": "mismatch_plugin"}},
        {"mismatch_plugin": """
            from hermes.kernel import hookimpl

            @hookimpl
            def on_turn_start(turn_number, message, **kwargs):  # Hermes's signature, not the kernel's
                raise AssertionError("never called")

            @hookimpl
            def prefetch(session_id, query):
                return "mismatch-plugin recalls: " + query
        """},
    )  # fmt: skip
    fake_model_server.reply("Hello.")
    chat = run("chat", "-q", "hi there")
    assert chat.returncode == 0, chat.stderr
    warnings = [line for line in chat.stderr.splitlines() if "skipped" in line]
    assert warnings == [
        "hermes: WARNING: plugin 'mismatch': hook on_turn_start skipped: it takes (turn_number, message) but the spec "
        "gives (session_id, turn, message); turn_number is not in the spec; its other hooks still work"
    ]
    (asked,) = user_turns(fake_model_server.requests[-1].body)
    assert asked.startswith(FENCE) and "mismatch-plugin recalls: hi there" in asked
    listed = [r for r in json.loads(run("plugin", "list", "--json").stdout) if r["name"] == "mismatch"]
    assert "hook on_turn_start skipped" in listed[0]["error"]


FAULTY = '''
from agent.memory_provider import MemoryProvider


class Faulty(MemoryProvider):
    name = "faulty"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return [{"name": "faulty_lookup", "description": "Look something up.", "parameters": {"type": "object"}}]

    def handle_tool_call(self, tool_name, args, **kwargs):
        raise ConnectionError("lookup backend unreachable")

    def prefetch(self, query, *, session_id=""):
        raise RuntimeError("recall backend down")

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        raise TimeoutError("sync timed out")
'''


def test_fault_table_a_broken_or_failing_provider_costs_one_line_and_nothing_else(
    run, fake_model_server: FakeModelServer, hermes_home: Path
) -> None:
    plugins = hermes_home / "plugins"
    (plugins / "broken").mkdir(parents=True)
    (plugins / "broken" / "plugin.yaml").write_text("name: broken\n")
    (plugins / "broken" / "__init__.py").write_text("from agent.memory_provider import MemoryProvider\ndef oops(:\n")
    (plugins / "faulty").mkdir()
    (plugins / "faulty" / "__init__.py").write_text(FAULTY)
    env = {"HERMES_LOAD_PLUGINS": "broken,faulty"}

    # A selected provider that cannot even be imported: one line naming it and why; nothing is sent.
    assert run("config", "set", "memory.provider", "broken", extra=env).returncode == 0
    broken = run("chat", "-q", "hello", extra=env)
    assert broken.returncode != 0 and "Traceback" not in broken.stderr
    (line,) = [x for x in broken.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith("error: 'hermes.memory_providers' plugin 'broken' failed to load:") and "SyntaxError" in line
    assert fake_model_server.requests == []

    # Installing over an existing folder is refused without --upgrade, and the old folder is kept.
    again = run("plugin", "install", str(PROVIDERS / "factbook"))
    assert again.returncode == 0
    refused = run("plugin", "install", str(PROVIDERS / "factbook"))
    assert refused.returncode == 1 and "already exists; use `hermes plugin install --upgrade`" in refused.stderr
    assert (plugins / "factbook" / "store.py").is_file()
    not_a_plugin = run("plugin", "install", str(hermes_home))
    assert not_a_plugin.returncode == 1 and "neither a Hermes provider folder" in not_a_plugin.stderr

    # A provider whose every call fails: warnings, an error result for its tool, and the turn still completes.
    assert run("config", "set", "memory.provider", "faulty", extra=env).returncode == 0
    fake_model_server.tool_calls(("faulty_lookup", {}))
    fake_model_server.reply("Answered without it.")
    faulty = run("chat", "-q", "look it up", extra=env)
    assert faulty.returncode == 0, faulty.stderr
    assert faulty.stdout.strip() == "Answered without it." and "Traceback" not in faulty.stderr
    assert "prefetch of 'faulty' failed: RuntimeError: recall backend down" in faulty.stderr
    assert "sync_turn of 'faulty' failed: TimeoutError: sync timed out" in faulty.stderr
    (result,) = [m for m in fake_model_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "lookup backend unreachable" in result["content"]
    assert not [k for k in ("agent", "tools", "utils") if (hermes_home / k).exists()]

    # Setup of a provider that is not there, and a bad --set value: one line each, nothing saved.
    missing = run("memory", "setup", "nope")
    assert missing.returncode == 1 and "no 'hermes.memory_providers' plugin named 'nope'" in missing.stderr
    bad = run("memory", "setup", "factbook", "--set", "mode=sometimes", extra={"HERMES_LOAD_PLUGINS": "factbook"})
    assert bad.returncode == 1 and "choose one of keyword, all; nothing was saved" in bad.stderr
    assert not (hermes_home / ".env").exists() and not (hermes_home / "factbook" / "config.json").exists()
    assert run("config", "set", "memory.provider", "").returncode == 0
    fake_model_server.reply("Back to builtin memory.")
    assert run("chat", "-q", "still there?").returncode == 0


def test_a_delegated_task_reaches_a_hermes_provider_as_text(run, fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    from hermes.kernel.testing import Reply

    assert run("plugin", "install", str(PROVIDERS / "factbook")).returncode == 0
    assert run("memory", "setup", "factbook", "--set", "api_key=sk-fact-0123", input="\n\n").returncode == 0
    fake_model_server.lane("count the moons", Reply("Jupiter has 95 known moons."))
    fake_model_server.tool_calls(("delegate_task", {"tasks": [{"goal": "count the moons of Jupiter"}]}))
    fake_model_server.reply("The sub-agent says 95.")
    chat = run("chat", "-q", "ask a helper how many moons Jupiter has")
    assert chat.returncode == 0, chat.stderr
    log = calls(hermes_home / "factbook" / "calls.jsonl")
    (delegation,) = [c for c in log if c["call"] == "on_delegation"]
    assert (delegation["task"], delegation["result"]) == ("count the moons of Jupiter", "Jupiter has 95 known moons.")
    children = [s["id"] for s in json.loads(run("sessions", "list", "--json").stdout) if s["source"] == "subagent"]
    assert [delegation["child_session_id"]] == children
    assert in_order([c["call"] for c in log], ["on_turn_start", "prefetch", "on_delegation", "sync_turn"])
