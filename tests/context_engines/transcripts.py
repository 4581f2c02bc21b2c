"""Transcript builders for engine tests: hand-written helpers and hypothesis strategies."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["assistant", "call", "image_user", "result", "transcripts", "user"]

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBORw0KGgo" * 400}}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def image_user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}, IMAGE]}


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def assistant(text: str | None = None, *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def result(call_id: str, content: str, name: str = "terminal") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "tool_name": name, "content": content}


_TOOLS = ("terminal", "read_file", "search_files", "write_file", "todo")
_words = st.text(alphabet="abcdefghij klmnop\n", min_size=1, max_size=40).filter(lambda s: s.strip())


@st.composite
def _output(draw: Any, tool: str) -> str:
    size = draw(st.sampled_from([5, 150, 600, 3_000]))
    body = draw(st.sampled_from(["ok line\n", "same output every time\n", "error: boom\n", "x" * 50 + "\n"]))
    text = (body * (size // len(body) + 1))[:size]
    return f"exit code: {draw(st.integers(0, 2))}\n{text}" if tool == "terminal" else text


@st.composite
def _turn(draw: Any, index: int, ids: list[int]) -> list[dict[str, Any]]:
    request = f"request {index}: " + draw(_words)
    messages = [image_user(request) if draw(st.booleans()) and index % 3 == 0 else user(request)]
    for step in range(draw(st.integers(0, 3))):
        calls, results = [], []
        for _ in range(draw(st.integers(1, 3))):  # parallel calls
            ids[0] += 1
            call_id = f"call_{ids[0]}"
            tool = draw(st.sampled_from(_TOOLS))
            long = draw(st.booleans()) and draw(st.booleans())
            args = {"command": "pytest -q", "path": f"src/mod{step}.py", "content": "y" * (900 if long else 10)}
            calls.append(call(call_id, tool, **args))
            results.append(result(call_id, draw(_output(tool)), tool))
        text = draw(st.one_of(st.none(), st.just(f"working on step {step}")))
        messages += [assistant(text, *calls), *results]
    ending = draw(st.sampled_from(["answer", "answer", "tools", "user_only"]))
    if ending == "answer" or (ending == "tools" and messages[-1]["role"] == "user"):
        messages.append(assistant(f"answer to request {index}: " + draw(_words)))
    return messages


@st.composite
def transcripts(draw: Any, min_turns: int = 1, max_turns: int = 12) -> list[dict[str, Any]]:
    """A valid conversation: user turns with tool batches (parallel calls, images, long
    arguments, duplicate outputs), maybe led by a system message."""
    ids = [0]
    turns = draw(st.integers(min_turns, max_turns))
    messages: list[dict[str, Any]] = []
    for index in range(turns):
        turn = draw(_turn(index, ids))
        if messages and messages[-1]["role"] == "user":
            messages.append(assistant(f"(answered {index - 1})"))  # a turn ended without an answer
        messages += turn
    if draw(st.booleans()):
        messages.insert(0, {"role": "system", "content": "You are hermes."})
    return messages
