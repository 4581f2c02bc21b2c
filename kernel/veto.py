"""The value a veto hook returns to block what it was asked about."""

from __future__ import annotations

__all__ = ["Veto"]


class Veto:
    """Returned by ``before_tool_call`` or ``before_approval_request`` to block the call.

    :param reason: one line saying why; the model (or the user) reads it as
        ``blocked by PLUGIN: reason``.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str = "") -> None:
        self.reason = str(reason or "no reason given")

    def __repr__(self) -> str:
        return f"Veto({self.reason!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Veto) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash(("Veto", self.reason))
