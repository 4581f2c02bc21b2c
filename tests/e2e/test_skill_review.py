"""Self-improvement end to end: a long scripted task, then the review writes a skill the next session indexes."""

from __future__ import annotations

import json

from hermes.kernel.testing import FakeModelServer, Reply, ToolCall
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401

from .test_chat import chat_env, hermes_chat

SKILL = """---
name: count-lines-per-file
description: Count the lines of every file in a folder with one terminal command.
---
# Count lines per file

1. Run `wc -l *` in the folder instead of reading each file.
2. Report the totals.
"""


def test_review_creates_a_skill_that_the_next_session_indexes(fake_model_server: FakeModelServer, tmp_path, hermes) -> None:
    server = fake_model_server
    for n in range(16):
        (tmp_path / f"f{n}.txt").write_text("x\n" * (n + 1))
        server.enqueue(Reply(tool_calls=(ToolCall("read_file", {"path": f"f{n}.txt"}),)))
    server.reply("The 16 files hold 1 to 16 lines.")
    # The review runs after the answer, in the background, with only the skill tools.
    server.tool_calls(("skill_manage", {"action": "create", "name": "count-lines-per-file", "content": SKILL}))
    server.reply("Created the skill count-lines-per-file.")
    result = hermes_chat("-q", "how many lines does each file have?", env=chat_env(server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The 16 files hold 1 to 16 lines.\n"
    assert "skills review: 1 change(s)" in result.stderr
    review_request = server.requests[17]
    assert sorted(t["function"]["name"] for t in review_request.body["tools"]) == ["skill_manage", "skill_view", "skills_list"]
    listed = json.loads(hermes("skills", "list", "--json").stdout)
    assert "count-lines-per-file" in json.dumps(listed)
    server.reply("ok")
    hermes_chat("-q", "hello again", env=chat_env(server), cwd=tmp_path)
    next_prompt = server.requests[-1].body["messages"][0]["content"]
    assert "count-lines-per-file" in next_prompt and "Count the lines of every file" in next_prompt
