"""The store's errors a user can act on (one line each)."""

from __future__ import annotations

from ..errors import HermesError

__all__ = ["SessionNotFoundError", "TitleInUseError"]


class SessionNotFoundError(HermesError):
    """No session with that id."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"no session {session_id!r}; see `hermes sessions list`")


class TitleInUseError(HermesError):
    """Another session already has that title."""
