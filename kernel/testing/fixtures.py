"""pytest fixtures for hermes and plugin authors.

Enable them in a ``conftest.py``::

    pytest_plugins = ["hermes.kernel.testing.fixtures"]

``fake_model_server`` is a running :class:`FakeModelServer` (stopped after
the test); ``scripted_provider`` a fresh :class:`ScriptedProvider`;
``postgres_cluster`` a throwaway PostgreSQL server for the session and
``postgres_url`` a fresh database on it (for session store backends).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .provider import ScriptedProvider
from .server import FakeModelServer

__all__ = ["fake_model_server", "postgres_cluster", "postgres_url", "scripted_provider"]


@pytest.fixture
def fake_model_server() -> Iterator[FakeModelServer]:
    """A fake OpenAI/Anthropic API on 127.0.0.1 for the duration of one test."""
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def scripted_provider() -> ScriptedProvider:
    """An in-process provider with an empty script (answers ``OK`` until scripted)."""
    return ScriptedProvider()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """A throwaway PostgreSQL server for the whole test session (one per xdist worker).

    Raises :class:`~hermes.kernel.testing.postgres.PostgresUnavailable` (an
    error, never a skip) when the machine has no PostgreSQL binaries.
    """
    from .postgres import PostgresCluster

    with PostgresCluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: Any) -> str:
    """The URL of a fresh, empty database on :func:`postgres_cluster`."""
    return postgres_cluster.create_database()
