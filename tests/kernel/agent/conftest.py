"""Agents over the in-process scripted provider and a real store file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel import PluginHost, Tool
from hermes.kernel.agent import Agent, ModelRoute
from hermes.kernel.providers.client import ModelClient
from hermes.kernel.providers.retry import RetryPolicy
from hermes.kernel.testing import ScriptedProvider
from hermes.kernel.tool_registry import ToolRegistry

OBJ = {"type": "object", "properties": {"text": {"type": "string"}}}


def scripted_client(provider: ScriptedProvider, name: str = "scripted") -> ModelClient:
    return ModelClient(name, lambda **kw: provider, None, retry=RetryPolicy(max_attempts=1), sleep=lambda s: None)


def echo_tools(log: list[str] | None = None) -> ToolRegistry:
    def echo(args: dict[str, Any], ctx) -> str:
        if log is not None:
            log.append(args.get("text", ""))
        return f"echo: {args.get('text', '')}"

    return ToolRegistry([Tool("echo", "Echo text back.", OBJ, echo, "test", read_only=True)])


@pytest.fixture
def store(tmp_path: Path):
    store = SQLiteSessionStore(tmp_path / "state.db")
    yield store
    store.close()


@pytest.fixture
def make_agent(tmp_path: Path, store):
    def make(*providers: ScriptedProvider, tools: ToolRegistry | None = None, host: PluginHost | None = None, **kw: Any) -> Agent:
        routes = [ModelRoute(scripted_client(p, f"p{i}"), f"model-{i}") for i, p in enumerate(providers)]
        kw.setdefault("cwd", tmp_path)
        kw.setdefault("stream", False)
        return Agent(routes=routes, tools=tools or echo_tools(), host=host or PluginHost(load_plugins=""),
                     store=store, results_dir=tmp_path / "results", **kw)

    return make
