"""Tool dispatch never crashes a turn; parallel batches only where safe."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes.kernel import Tool, ToolContext, ToolError
from hermes.kernel.tool_registry import ToolCall, ToolRegistry, plan_batches

OBJ = {"type": "object", "properties": {}}


def make_tool(name: str, handler=None, **kw) -> Tool:
    return Tool(name=name, description=name, parameters=OBJ, handler=handler or (lambda a, c: "ok"), toolset="t", **kw)


def call(name: str, args: object = None, id: str | None = None) -> ToolCall:
    return ToolCall(id or f"id-{name}", name, args if isinstance(args, str) else json.dumps(args or {}))


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(session_id="s", cwd=tmp_path)


def test_unknown_tool_bad_json_non_object_and_raising_handlers(ctx: ToolContext) -> None:
    def boom(args, c):
        raise RuntimeError("disk on fire")

    def refuse(args, c):
        raise ToolError("file is locked; try later")

    registry = ToolRegistry([make_tool("echo", lambda a, c: a), make_tool("boom", boom), make_tool("refuse", refuse)])
    unknown = registry.dispatch(call("nope"), ctx)
    assert unknown.is_error and unknown.content == "error: unknown tool 'nope'; available tools: echo, boom, refuse"
    bad = registry.dispatch(call("echo", '{"a": '), ctx)
    assert bad.is_error and "not valid JSON" in bad.content and "send a single JSON object" in bad.content
    assert registry.dispatch(call("echo", "[1, 2]"), ctx).content == "error: the arguments for echo must be a JSON object, not list"
    assert registry.dispatch(call("boom"), ctx).content == "error: boom failed: RuntimeError: disk on fire"
    assert registry.dispatch(call("refuse"), ctx).content == "error: file is locked; try later"
    ok = registry.dispatch(call("echo", {"x": [1, "é"]}), ctx)
    assert not ok.is_error and json.loads(ok.content) == {"x": [1, "é"]}
    assert registry.dispatch(call("echo", ""), ctx).content == "{}"
    message = ok.as_message()
    assert message == {"role": "tool", "tool_call_id": "id-echo", "tool_name": "echo", "content": ok.content}


def test_from_message_accepts_object_arguments() -> None:
    parsed = ToolCall.from_message({"id": "c1", "type": "function", "function": {"name": "x", "arguments": {"a": 1}}})
    assert parsed == ToolCall("c1", "x", '{"a": 1}')


def test_duplicate_names_keep_the_first() -> None:
    first, second = make_tool("a"), make_tool("a")
    registry = ToolRegistry([first, second])
    assert registry.get("a") is first and len(registry) == 1


def _registry() -> ToolRegistry:
    return ToolRegistry(
        [
            make_tool("read", read_only=True, path_params=("path",)),
            make_tool("write", path_params=("path",)),
            make_tool("grep", read_only=True),
            make_tool("shell"),
            make_tool("ask", read_only=True, interactive=True),
        ]
    )


def test_plan_batches_groups_only_safe_calls(tmp_path: Path) -> None:
    registry = _registry()
    calls = [
        call("read", {"path": "a.py"}, "1"),
        call("read", {"path": "a.py"}, "2"),  # two reads of one file: fine
        call("write", {"path": "b.py"}, "3"),  # disjoint write: fine
        call("grep", {}, "4"),
        call("write", {"path": "a.py"}, "5"),  # writes what was read: new batch
        call("read", {"path": "src/x.py"}, "6"),
        call("write", {"path": "src"}, "7"),  # a folder overlapping src/x.py: new batch
        call("shell", {}, "8"),  # not read-only, no paths: alone
        call("ask", {}, "9"),  # interactive: alone
        call("unknown", {}, "10"),
    ]
    batches = plan_batches(calls, registry, tmp_path)
    assert [[c.id for c in b] for b in batches] == [["1", "2", "3", "4"], ["5", "6"], ["7"], ["8"], ["9"], ["10"]]


@given(st.lists(st.tuples(st.sampled_from(["read", "write", "grep", "shell", "ask", "nope"]), st.sampled_from(["a", "a/b", "c", "."])), max_size=12))
def test_plan_batches_keeps_order_and_never_pairs_conflicts(specs) -> None:
    registry = _registry()
    calls = [call(name, {"path": path}, str(i)) for i, (name, path) in enumerate(specs)]
    batches = plan_batches(calls, registry, Path("/w"))
    assert [c for b in batches for c in b] == calls
    for batch in batches:
        if len(batch) == 1:
            continue
        names = [c.name for c in batch]
        assert not {"shell", "ask", "nope"} & set(names)
        writes = [Path("/w", json.loads(c.arguments)["path"]).resolve() for c in batch if c.name == "write"]
        paths = [Path("/w", json.loads(c.arguments)["path"]).resolve() for c in batch if c.name in ("read", "write")]
        for w in writes:
            assert sum(1 for p in paths if p == w or w in p.parents or p in w.parents) == 1


def test_run_executes_a_safe_batch_concurrently_in_call_order(ctx: ToolContext) -> None:
    barrier = threading.Barrier(3, timeout=5)

    def slow_read(args, c):
        barrier.wait()  # only passes if all three run at once
        time.sleep(0.01 * (3 - int(args["n"])))
        return f"read {args['n']}"

    registry = ToolRegistry([make_tool("slow", slow_read, read_only=True)])
    calls = [call("slow", {"n": n}, f"c{n}") for n in (1, 2, 3)]
    results = registry.run(calls, ctx)
    assert [r.content for r in results] == ["read 1", "read 2", "read 3"]
    assert [r.call_id for r in results] == ["c1", "c2", "c3"]
