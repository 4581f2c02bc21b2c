"""Tenants on one ``hermes serve``: what one key's tenant writes never reaches another's.

Each test runs the real server in a subprocess with the project's fake model
server behind it, drives it with the openai SDK and plain HTTP as tenants A
and B (and an admin), and checks the wire, the stored rows and the prompts the
model was sent.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.serve_process import ServeProcess, db_rows, serve_env

SECRET = "ZEBRA-SECRET-4242"


def _keys(hermes) -> dict[str, str]:
    keys = {
        "a": hermes("serve", "key", "add", "alice").stdout.strip(),
        "a2": hermes("serve", "key", "add", "alice-ci", "--tenant", "alice").stdout.strip(),
        "b": hermes("serve", "key", "add", "bob").stdout.strip(),
        "admin": hermes("serve", "key", "add", "ops", "--admin").stdout.strip(),
    }
    assert all(k.startswith("hk-") for k in keys.values()), keys
    return keys


def _get(server: ServeProcess, path: str, key: str) -> tuple[int, str]:
    request = urllib.request.Request(server.url + path, headers={"authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _system(fake: FakeModelServer, index: int = -1) -> str:
    messages = fake.requests[index].messages
    return str(messages[0]["content"]) if messages and messages[0].get("role") == "system" else ""


def test_another_tenants_response_conversation_and_session_ids_are_not_found_on_every_route(
    fake_model_server: FakeModelServer, hermes, hermes_home: Path, tmp_path: Path
) -> None:
    keys = _keys(hermes)
    fake_model_server.reply("noted").reply("noted").reply("again").reply("later").reply("mine")
    with ServeProcess(serve_env(fake_model_server, hermes_home, workspace=str(tmp_path / "ws"))) as server:
        alice, bob = server.client(keys["a"]), server.client(keys["b"])
        first = alice.responses.create(model="hermes", input=f"remember {SECRET}")
        alice.responses.create(model="hermes", input="plan", conversation="team-plan")
        session_id = first.id.split("_", 2)[2]
        calls = len(fake_model_server.requests)

        with pytest.raises(openai.NotFoundError) as by_response:
            bob.responses.create(model="hermes", input="what was the secret?", previous_response_id=first.id)
        assert by_response.value.body["code"] == "previous_response_not_found"
        with pytest.raises(openai.NotFoundError):  # the branch form of the same id
            bob.responses.create(model="hermes", input="x", previous_response_id=f"resp_at0_{session_id}")
        with pytest.raises(openai.NotFoundError) as by_conversation:
            bob.responses.create(model="hermes", input="x", conversation="team-plan")
        assert by_conversation.value.body["code"] == "conversation_not_found"
        assert len(fake_model_server.requests) == calls  # nothing ran for bob

        # The dashboard, as bob: the session page, the list, search and usage show none of alice's.
        status, page = _get(server, f"/session/{session_id}", keys["b"])
        assert status == 404 and SECRET not in page
        status, listing = _get(server, "/", keys["b"])
        assert status == 200 and session_id not in listing and "team-plan" not in listing
        status, found = _get(server, f"/search?q={SECRET}", keys["b"])
        assert status == 200 and "0 match(es)" in found and session_id not in found

        # A second key of tenant alice, and the admin, reach them; alice continues her own.
        assert _get(server, f"/session/{session_id}", keys["a2"])[0] == 200
        status, everything = _get(server, f"/search?q={SECRET}", keys["admin"])
        assert status == 200 and session_id in everything
        status, admin_list = _get(server, "/", keys["admin"])
        assert session_id in admin_list and "team-plan" in admin_list
        again = server.client(keys["a2"]).responses.create(model="hermes", input="and now?", previous_response_id=first.id)
        assert again.output_text == "again"
        bob.responses.create(model="hermes", input="my own", conversation="bob-plan")

    tenants = dict(db_rows(hermes_home, "SELECT id, tenant FROM sessions"))
    assert tenants[session_id] == "alice" and tenants["team-plan"] == "alice" and tenants["bob-plan"] == "bob"
    assert set(tenants.values()) == {"alice", "bob"}


def test_nothing_one_tenant_writes_enters_another_tenants_prompt(
    fake_model_server: FakeModelServer, hermes, hermes_home: Path, tmp_path: Path
) -> None:
    keys = _keys(hermes)
    workspace = tmp_path / "ws"
    skill = "---\nname: bob-skill\ndescription: BOB-SKILL-MARK how bob deploys\n---\nsteps\n"
    fake_model_server.tool_calls(
        ("memory", {"action": "add", "target": "memory", "content": "BOB-MEMORY-MARK"}),
        ("skill_manage", {"action": "create", "name": "bob-skill", "content": skill}),
        ("write_file", {"path": "AGENTS.md", "content": "BOB-AGENTS-MARK"}),
    ).reply("done")
    fake_model_server.reply(f"alice says {SECRET}")
    fake_model_server.tool_calls(("session_search", {"query": SECRET})).reply("searched")
    fake_model_server.reply("bob again")
    fake_model_server.reply("alice again")
    fake_model_server.tool_calls(("session_search", {"query": SECRET})).reply("found")
    env = serve_env(fake_model_server, hermes_home, workspace=str(workspace))
    with ServeProcess(env) as server:
        alice, bob = server.client(keys["a"]), server.client(keys["b"])
        bob.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "set things up"}])
        tool_results = [m["content"] for m in fake_model_server.requests[-1].messages if m.get("role") == "tool"]
        assert len(tool_results) == 3 and not any(r.startswith("error") for r in tool_results), tool_results
        alice.chat.completions.create(model="hermes", messages=[{"role": "user", "content": f"keep {SECRET}"}])
        alice_prompt = _system(fake_model_server)
        bob.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "search"}])
        searched = [m["content"] for m in fake_model_server.requests[-1].messages if m.get("role") == "tool"]
        bob.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "again"}])
        bob_prompt = _system(fake_model_server)
        alice.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "again"}])
        alice_again = _system(fake_model_server)
        alice.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "search"}])
        alice_found = [m["content"] for m in fake_model_server.requests[-1].messages if m.get("role") == "tool"]

    marks = ("BOB-MEMORY-MARK", "BOB-SKILL-MARK", "BOB-AGENTS-MARK")
    for mark in marks:
        assert mark in bob_prompt, mark  # bob's writes took effect, for bob
        assert mark not in alice_prompt and mark not in alice_again, mark
    bob_search = json.loads(searched[0])
    assert bob_search["total_hits"] == 0 and bob_search["conversations"] == []  # only the query echoes the words
    assert SECRET in alice_found[0]  # the same search as alice finds her own message
    # Where each write went: the tenant's own folders, never the profile's.
    assert "BOB-MEMORY-MARK" in (hermes_home / "tenants" / "bob" / "memories" / "MEMORY.md").read_text()
    assert not (hermes_home / "memories" / "MEMORY.md").exists() or "BOB" not in (hermes_home / "memories" / "MEMORY.md").read_text()
    assert (hermes_home / "tenants" / "bob" / "skills" / "bob-skill" / "SKILL.md").is_file()
    assert not (hermes_home / "skills" / "bob-skill").exists()
    assert (workspace / "bob" / "AGENTS.md").read_text() == "BOB-AGENTS-MARK"
    assert not (workspace / "alice" / "AGENTS.md").exists() and not (workspace / "AGENTS.md").exists()


def test_tenant_names_are_checked_and_shown(hermes, hermes_home: Path, fake_model_server: FakeModelServer) -> None:
    bad = hermes("serve", "key", "add", "x", "--tenant", "../evil")
    assert bad.returncode != 0 and "invalid tenant name '../evil'" in bad.stderr and "Traceback" not in bad.stderr
    assert hermes("serve", "key", "add", "y", "--tenant", "..").returncode != 0
    assert hermes("serve", "key", "add", "team-key", "--tenant", "team").returncode == 0
    assert hermes("serve", "key", "add", "boss", "--admin").returncode == 0
    listed = {k["name"]: k for k in json.loads(hermes("serve", "key", "list", "--json").stdout)}
    assert listed["team-key"]["tenant"] == "team" and not listed["team-key"]["admin"]
    assert listed["boss"]["tenant"] == "boss" and listed["boss"]["admin"] is True
    table = hermes("serve", "key", "list").stdout
    assert "team" in table and "boss (admin)" in table
    # A hand-edited tenant that is not a name: one line at start naming the entry, nothing served.
    config = (hermes_home / "config.yaml").read_text().replace("tenant: team", "tenant: ../../etc")
    (hermes_home / "config.yaml").write_text(config)
    started = hermes("serve", "--port", "0", env=serve_env(fake_model_server, hermes_home))
    assert started.returncode != 0 and "serve.api_keys[0].tenant" in started.stderr
    assert len(started.stderr.strip().splitlines()) == 1 and "Traceback" not in started.stderr
