"""The ``builtin`` memory provider: MEMORY.md (agent notes) and USER.md (user profile)."""

from .provider import DEFAULT_LIMITS, MEMORY_TOOL, BuiltinMemoryProvider

__all__ = ["BuiltinMemoryProvider", "DEFAULT_LIMITS", "MEMORY_TOOL"]
