"""The clarify tool: asks through ctx.ask_user in a chat, refuses helpfully in one-shot mode."""

from __future__ import annotations

import pytest

from hermes.kernel import ToolContext, ToolError
from hermes.plugins.tools.clarify import clarify


def test_asks_the_user_with_choices(ctx: ToolContext) -> None:
    asked: list[tuple[str, list[str] | None]] = []

    def ask(question: str, choices: list[str] | None) -> str:
        asked.append((question, choices))
        return " Postgres "

    ctx.ask_user = ask
    out = clarify({"question": "Which database?", "choices": ["SQLite", "Postgres"]}, ctx)
    assert out == "The user answered: Postgres"
    assert asked == [("Which database?", ["SQLite", "Postgres"])]
    clarify({"question": "Anything else?"}, ctx)
    assert asked[-1] == ("Anything else?", None)


def test_empty_answer_means_proceed(ctx: ToolContext) -> None:
    ctx.ask_user = lambda q, c: ""
    assert clarify({"question": "Sure?"}, ctx).startswith("The user gave no answer. Proceed on your best assumption")


def test_one_shot_mode_says_proceed_on_an_assumption(ctx: ToolContext) -> None:
    assert not ctx.interactive
    with pytest.raises(ToolError, match="only works in an interactive chat.*best assumption"):
        clarify({"question": "Which database?"}, ctx)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'question'"),
        ({"question": "Q?", "choices": "a, b"}, "list of non-empty strings"),
        ({"question": "Q?", "choices": [str(i) for i in range(7)]}, "at most 6 choices"),
    ],
)
def test_bad_arguments(ctx: ToolContext, args: dict, message: str) -> None:
    ctx.ask_user = lambda q, c: pytest.fail("asked despite bad arguments")
    with pytest.raises(ToolError, match=message):
        clarify(args, ctx)
