"""Control characters in text bound for a terminal are shown, never obeyed."""

from __future__ import annotations

import io

import pytest

from hermes.kernel.cli._terminal import printable, printable_for


@pytest.mark.parametrize(("text", "shown"), [
    ("\x1b]0;owned\x07", "^[]0;owned^G"),  # retitle the terminal
    ("\x1b]52;c;aGk=\x07", "^[]52;c;aGk=^G"),  # write the clipboard
    ("\x1b[2J\x1b[31mred", "^[[2J^[[31mred"),  # clear, colour
    ("ok\rFAKE", "ok^MFAKE"),  # overwrite the line
    ("\x00\x08\x7f", "^@^H^?"),
    ("\x9b31m\x85", "\\x9b31m\\x85"),  # C1: a one-character CSI, next line
    ("tabs\tand\nlines stay; é ü 认证 ✓", "tabs\tand\nlines stay; é ü 认证 ✓"),
])  # fmt: skip
def test_controls_are_shown_in_caret_notation(text: str, shown: str) -> None:
    assert printable(text) == shown


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_only_a_terminal_gets_the_shown_form() -> None:
    assert printable_for(Tty(), "a\x1b[2Jb") == "a^[[2Jb"
    assert printable_for(io.StringIO(), "a\x1b[2Jb") == "a\x1b[2Jb"
    closed = io.StringIO()
    closed.close()
    assert printable_for(closed, "a\x1bb") == "a\x1bb"
