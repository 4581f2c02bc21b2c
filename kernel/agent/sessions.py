"""The agent's sessions in the store: opened, resumed and rotated, always inside the agent's tenant.

:class:`~.loop.Agent` keeps the story of a turn; how its session row comes to
exist lives here. An agent with a tenant creates its sessions with that tenant,
continues only sessions of that tenant (another tenant's id is "not found",
exactly as a missing one), and its compression children inherit the tenant in
the store itself.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..prompt import PromptContext, build_system_prompt
from ..store.errors import SessionNotFoundError
from ..store.rows import new_session_id
from ..store.tenants import require_tenant_session, visible_to
from .events import emit
from .resuming import load_for_writing
from .turn_state import carry_over_text

if TYPE_CHECKING:
    from .loop import Agent

__all__ = ["ensure_session", "load_session", "rotate", "session_prompt", "start_engine"]

log = logging.getLogger(__name__)


def load_session(agent: Agent, session_id: str) -> None:
    """Continue the stored session ``session_id`` (its compression tip) from here on."""
    if agent.store is None:
        raise ValueError("resuming a session needs a session store")
    if agent.tenant is not None:
        require_tenant_session(agent.store, session_id, agent.tenant)  # before anything of it is read
        tip = agent.store.resume(session_id).session
        if not visible_to(tip, agent.tenant):  # a tip outside the tenant: a link made by hand
            raise SessionNotFoundError(session_id)
    # Claimed for writing before anything is repaired or appended (or continued in a branch).
    def warn(text: str) -> None:
        emit(agent.on_event, "status", f"warning: {text}")

    loaded = load_for_writing(agent.store, session_id, agent.writer, warn)
    agent.session_id = loaded.session["id"]
    agent.system_prompt = loaded.session.get("system_prompt")
    agent.transcript.reset(loaded.messages, persisted=loaded.persisted)
    agent.turn = sum(1 for m in agent.messages if m.get("role") == "user")
    agent.tool_context.session_id = agent.session_id
    agent.transcript.flush(agent.session_id)  # the repairs made on loading
    start_engine(agent, agent.session_id, resumed=True)


def ensure_session(agent: Agent) -> str:
    """The current session's id, creating its row (with the frozen prompt and the tenant) on first use."""
    if agent.session_id is not None and agent.system_prompt is not None:
        return agent.session_id
    session_id = agent.session_id or new_session_id()
    store = agent.store
    # A chosen id that another tenant already has is refused, never written to.
    existing = None if store is None or agent.session_id is None else store.get_session(session_id)
    if existing is not None and not visible_to(existing, agent.tenant):
        raise SessionNotFoundError(session_id)
    agent.writer.hold(session_id)  # a new id is always free; a resumed one is held already
    if agent.memory is not None:
        agent.memory.start(session_id)  # takes the snapshot the prompt freezes
    agent.system_prompt = session_prompt(agent, session_id)
    # A resumed row without a stored prompt (written by another tool) is used as it is.
    if store is not None and existing is None:
        # The frozen prompt is stored with the row: a resume reuses it byte for byte.
        store.create_session(
            session_id=session_id, source=agent.source, model=agent.primary.model,
            system_prompt=agent.system_prompt, parent_session_id=agent.parent_session_id, tenant=agent.tenant,
        )  # fmt: skip
    agent.session_id = session_id
    agent.tool_context.session_id = session_id
    start_engine(agent, session_id, resumed=False)
    if existing is None:  # a new session, not a stored one picked up again
        agent.host.call("on_session_start", session_id=session_id, source=agent.source,
                        parent_session_id=agent.parent_session_id)  # fmt: skip
    return session_id


def session_prompt(agent: Agent, session_id: str) -> str:
    """The system prompt a new session (or a compression child) freezes; a resume reuses it byte for byte."""
    return build_system_prompt(
        PromptContext(
            session_id=session_id,
            model=agent.primary.model,
            provider=agent.primary.client.name,
            tool_names=tuple(agent.tools.names),
            soul_path=agent.soul_path,
            system_message=agent.system_message,
            memory_block=agent.memory.system_prompt_block() if agent.memory is not None else None,
            **(agent.prompt_extras() if agent.prompt_extras else {}),
            carry_over=carry_over_text(agent.tool_context.state, getattr(agent.engine, "system_note", None)),
            cwd=agent.cwd,
        )
    )


def start_engine(agent: Agent, session_id: str, *, resumed: bool) -> None:
    """Tell the context engine a session (new or resumed) starts; its failure never stops the agent."""
    engine = agent.engine
    if engine is None:
        return
    try:
        engine.on_session_start(session_id, resumed=resumed, hermes_home=agent.tool_context.home,
                                platform=agent.source, model=agent.primary.model)  # fmt: skip
    except Exception as exc:
        log.warning("context engine %r: on_session_start failed: %s: %s", engine.name, type(exc).__name__, exc)


def rotate(agent: Agent, messages: list[dict[str, Any]]) -> None:
    """Continue in a child session holding ``messages`` (the parent ends with ``compression``)."""
    old = agent.session_id
    assert old is not None
    agent.transcript.flush(old)
    new = new_session_id()
    agent.writer.hold(new)
    if agent.memory is not None:
        agent.memory.refresh_snapshot()
    # The system prompt is rebuilt at this boundary: memory written meanwhile and
    # the live todo list reach the model, then stay frozen until the next one.
    prompt = session_prompt(agent, new)
    if agent.store is not None:
        agent.store.compression_child(old, messages, system_prompt=prompt, child_id=new)  # the child keeps the tenant
    agent.session_id, agent.system_prompt = new, prompt
    agent.transcript.reset(list(messages), persisted=len(messages))
    agent.tool_context.session_id = new
    agent.transcript.follow_last_turn()
    agent.host.call("on_session_switch", old_session_id=old, new_session_id=new, reason="compression")
