"""Memory: the manager that runs the builtin and the external memory provider."""

from .manager import BUILTIN, MEMORY_GROUP, MEMORY_TOOLSET, MemoryManager

__all__ = ["BUILTIN", "MEMORY_GROUP", "MEMORY_TOOLSET", "MemoryManager"]
