"""How a chat shows progress: streamed text, one line per tool call, a spinner while tools run."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any, TextIO

from ..redact import redact_text
from ._terminal import printable, printable_for

if TYPE_CHECKING:
    from ..agent import AgentEvent

__all__ = ["ChatDisplay", "short_arguments"]

# Streamed text held back at most this long before it is written up to a space.
_HOLD_CHARS = 160


def short_arguments(arguments: str, limit: int = 80) -> str:
    """The tool arguments as one short line, redacted before it is cut (a cut secret is no longer recognised)."""
    from ..arguments import decode_arguments

    try:
        data = decode_arguments(arguments)
    except ValueError:  # too deep, too long or not JSON: the text itself, cut below
        data = arguments[:4096]  # far past what is shown, so a secret is whole when it is redacted
    if isinstance(data, dict):
        text = ", ".join(f"{k}={v!r}" if not isinstance(v, str) else f"{k}={v}" for k, v in data.items())
    else:
        text = str(data)
    text = redact_text(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ChatDisplay:
    """Renders agent events. In one-shot mode answer text is not streamed (stdout gets only the answer)."""

    def __init__(self, *, stream_text: bool, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.stream_text = stream_text
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.streamed = False
        self._turn_text: list[str] = []
        self._spinner: Any = None
        self._label: str | None = None  # what the spinner says while a tool runs
        self._paused = False  # a question is on the screen: nothing may draw over it
        self._pending = ""  # streamed text not yet written (see _write_pending)
        self._lock = threading.Lock()

    def __call__(self, event: AgentEvent) -> None:
        with self._lock:
            if event.kind == "text" and self.stream_text:
                self._turn_text.append(event.text)
                self._pending += event.text
                self._write_pending(final=False)
                self.streamed = True
            elif event.kind == "tool_start":
                self._end_text_line()
                label = f"{event.text} {short_arguments(event.data.get('arguments', ''))}"
                self._start_spinner(printable(redact_text(label)))
            elif event.kind == "tool_end":
                self._stop_spinner()
                mark = "✗" if event.data.get("error") else "✓"
                self.err.write(printable(f"  {mark} {event.text} ({event.data.get('duration', 0.0):.1f}s)") + "\n")
                self.err.flush()
            elif event.kind == "status":
                if event.text.startswith("failed: "):
                    return  # the caller reports a failed turn once, with what to do next
                self._end_text_line()
                self.err.write(f"  · {printable(redact_text(event.text))}\n")
                self.err.flush()

    def _write_pending(self, *, final: bool) -> None:
        """Write streamed text redacted, a line at a time, so no secret is split across writes.

        A long line without a newline is written up to its last space once it passes
        ``_HOLD_CHARS``, so a paragraph still appears as it streams.
        """
        text = self._pending
        cut = len(text) if final else text.rfind("\n") + 1
        if not cut and len(text) > _HOLD_CHARS:
            cut = text.rfind(" ") + 1
        if cut <= 0:
            return
        self.out.write(printable_for(self.out, redact_text(text[:cut])))
        self.out.flush()
        self._pending = text[cut:]

    def _end_text_line(self) -> None:
        if self._pending:
            self._write_pending(final=True)
        if self.streamed:
            self.out.write("\n")
            self.out.flush()
            self.streamed = False

    def _start_spinner(self, label: str) -> None:
        self._stop_spinner()
        self._label = label
        if not self.err.isatty():
            self.err.write(f"  → {label}\n")
        elif not self._paused:
            self._spin()

    def _spin(self) -> None:
        from rich.console import Console

        self._spinner = Console(file=self.err).status(f"running {self._label}")
        self._spinner.start()

    def _stop_spinner(self) -> None:
        self._label = None
        self._hide_spinner()

    def _hide_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()  # transient: the spinner's line is erased, the cursor back at its start
            self._spinner = None

    def pause(self) -> None:
        """Take the spinner off the screen while the user is asked something (an approval, a question)."""
        with self._lock:
            self._paused = True
            self._hide_spinner()
            self._end_text_line()

    def resume(self, *, spin: bool = True) -> None:
        """Let progress draw again once the question is answered; ``spin`` brings back the running tool's spinner."""
        with self._lock:
            self._paused = False
            if spin and self._label is not None and self._spinner is None and self.err.isatty():
                self._spin()

    def start_turn(self) -> None:
        self._turn_text = []

    def showed(self, answer: str) -> bool:
        """True when ``answer`` already reached the screen as streamed text."""
        return answer.strip() in "".join(self._turn_text)

    def finish(self) -> None:
        """Close the streamed line (after a turn)."""
        with self._lock:
            self._stop_spinner()
            self._end_text_line()
