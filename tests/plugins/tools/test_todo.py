"""The todo tool: the task list in ctx.state, replaced or merged, and rendered for re-injection."""

from __future__ import annotations

import pytest

from hermes.kernel import ToolContext, ToolError
from hermes.plugins.tools.todo import render_todos, todo

PLAN = [
    {"id": "1", "content": "Read the failing test", "status": "completed"},
    {"id": "2", "content": "Fix the parser", "status": "in_progress"},
    {"id": "3", "content": "Run the suite"},
]


def test_empty_list_and_write_then_read(ctx: ToolContext) -> None:
    assert todo({}, ctx) == "The task list is empty."
    out = todo({"todos": PLAN}, ctx)
    assert out == (
        "Task list (1 pending, 1 in progress, 1 completed):\n"
        "- [x] 1. Read the failing test (completed)\n"
        "- [>] 2. Fix the parser (in_progress)\n"
        "- [ ] 3. Run the suite (pending)"
    )
    assert todo({}, ctx) == out
    assert ctx.state["todo"][2] == {"id": "3", "content": "Run the suite", "status": "pending"}


def test_replace_drops_items_merge_keeps_them(ctx: ToolContext) -> None:
    todo({"todos": PLAN}, ctx)
    todo({"todos": [{"id": "2", "status": "completed"}, {"id": "4", "content": "Write docs"}], "merge": True}, ctx)
    assert [(i["id"], i["status"]) for i in ctx.state["todo"]] == [
        ("1", "completed"), ("2", "completed"), ("3", "pending"), ("4", "pending"),
    ]
    assert ctx.state["todo"][1]["content"] == "Fix the parser"  # merge changes only the fields given
    todo({"todos": [{"id": "a", "content": "Only this"}]}, ctx)
    assert ctx.state["todo"] == [{"id": "a", "content": "Only this", "status": "pending"}]


def test_render_for_reinjection(ctx: ToolContext) -> None:
    assert render_todos(ctx.state) == ""
    todo({"todos": [*PLAN, {"id": "5", "content": "Dropped idea", "status": "cancelled"}]}, ctx)
    assert render_todos(ctx.state, active_only=True) == (
        "- [>] 2. Fix the parser (in_progress)\n- [ ] 3. Run the suite (pending)"
    )
    assert "- [-] 5. Dropped idea (cancelled)" in render_todos(ctx.state)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"todos": "do stuff"}, "must be an array"),
        ({"todos": [{"content": "x"}]}, "needs a non-empty string id"),
        ({"todos": [{"id": "1"}]}, "needs content"),
        ({"todos": [{"id": "1", "content": "x", "status": "done"}]}, "status must be one of pending, in_progress"),
        ({"todos": [{"id": "1", "content": "x"}, {"id": "1", "content": "y"}]}, "appears twice"),
        ({"todos": [{"id": "9", "status": "completed"}], "merge": True}, "no item with id '9' to update"),
    ],
)
def test_invalid_input_leaves_the_list_alone(ctx: ToolContext, args: dict, message: str) -> None:
    todo({"todos": PLAN}, ctx)
    before = [dict(i) for i in ctx.state["todo"]]
    with pytest.raises(ToolError, match=message):
        todo(args, ctx)
    assert ctx.state["todo"] == before


def test_integer_ids_are_accepted(ctx: ToolContext) -> None:
    todo({"todos": [{"id": 1, "content": "x"}]}, ctx)
    todo({"todos": [{"id": 1, "status": "completed"}], "merge": "true"}, ctx)
    assert ctx.state["todo"] == [{"id": "1", "content": "x", "status": "completed"}]
