"""Test doubles for hermes and its plugin authors.

* :class:`FakeModelServer` — a wire-compatible fake of the OpenAI Chat
  Completions and Anthropic Messages APIs (JSON and SSE) with scripted
  replies, a request log and fault injection; ``python -m hermes.kernel.testing
  serve --script FILE`` runs it from a shell.
* :class:`ScriptedProvider` — the same script answered in process, for fast
  unit tests that need no HTTP.
* :func:`validate_messages` / :func:`message_problems` — a strict check that
  a message list is one every provider API accepts (for engines and plugins
  that rewrite conversations).
* pytest fixtures in :mod:`hermes.kernel.testing.fixtures`
  (``pytest_plugins = ["hermes.kernel.testing.fixtures"]``).
"""

from .script import FAULT_KINDS, Fault, Reply, Script, ScriptedUsage, ToolCall, load_script
from .server import FakeModelServer, RecordedRequest
from .validate import InvalidMessages, message_problems, validate_messages

__all__ = [
    "FAULT_KINDS",
    "FakeModelServer",
    "Fault",
    "InvalidMessages",
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptedProvider",
    "ScriptedUsage",
    "ToolCall",
    "load_script",
    "message_problems",
    "validate_messages",
]


def __getattr__(name: str):  # the provider pulls in the kernel's provider layer lazily
    if name == "ScriptedProvider":
        from .provider import ScriptedProvider

        return ScriptedProvider
    raise AttributeError(name)
