"""pytest fixtures for hermes and plugin authors.

Enable them in a ``conftest.py``::

    pytest_plugins = ["hermes.kernel.testing.fixtures"]

``fake_model_server`` is a running :class:`FakeModelServer` (stopped after
the test); ``scripted_provider`` a fresh :class:`ScriptedProvider`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .provider import ScriptedProvider
from .server import FakeModelServer

__all__ = ["fake_model_server", "scripted_provider"]


@pytest.fixture
def fake_model_server() -> Iterator[FakeModelServer]:
    """A fake OpenAI/Anthropic API on 127.0.0.1 for the duration of one test."""
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def scripted_provider() -> ScriptedProvider:
    """An in-process provider with an empty script (answers ``OK`` until scripted)."""
    return ScriptedProvider()
