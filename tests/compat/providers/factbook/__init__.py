"""factbook: a memory provider written the way Hermes Agent's bundled providers are.

It imports Hermes's host modules by their top-level names, imports its own
submodule absolutely as ``plugins.memory.factbook``, registers through
``register(ctx)``, takes ``hermes_home`` as a string and ``session_id`` as a
keyword, and writes every call it receives to ``<home>/factbook/calls.jsonl``
so a test can check what arrived, with what, and in which order.
"""

import json
import os
import threading
from pathlib import Path

from agent.memory_provider import MemoryProvider
from hermes_cli.config import cfg_get, load_config
from hermes_constants import get_hermes_home
from plugins.memory.factbook.store import FactStore
from tools.registry import tool_error

FACT_STORE = {
    "name": "fact_store",
    "description": "Store a durable fact (action 'add') or look facts up (action 'search').",
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "search"]},
            "content": {"type": "string"},
            "query": {"type": "string"},
        },
        "required": ["action"],
    },
}


class FactbookProvider(MemoryProvider):
    def __init__(self):
        # The active profile's home is known before initialize(): read it now, as Hermes providers do.
        self._home = str(get_hermes_home())
        self._config = cfg_get(load_config(), "plugins", "factbook", default={}) or {}
        self._lock = threading.Lock()
        self._log("__init__", home=self._home, config=self._config)

    @property
    def name(self):
        return "factbook"

    def _log(self, call, **details):
        folder = os.path.join(self._home, "factbook")
        os.makedirs(folder, exist_ok=True)
        with self._lock, open(os.path.join(folder, "calls.jsonl"), "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"call": call, **details}, default=str) + "\n")

    def is_available(self):
        self._log("is_available")
        return bool(os.environ.get("FACTBOOK_API_KEY"))

    def initialize(self, session_id, **kwargs):
        self._home = kwargs["hermes_home"]
        self._log("initialize", session_id=session_id, hermes_home=kwargs["hermes_home"],
                  home_type=type(kwargs["hermes_home"]).__name__, platform=kwargs.get("platform"),
                  agent_context=kwargs.get("agent_context"))
        self._store = FactStore(os.path.join(self._home, "factbook", "facts.json"))

    def system_prompt_block(self):
        return "# Factbook\nUse fact_store to keep durable facts."

    def get_tool_schemas(self):
        return [FACT_STORE]

    def handle_tool_call(self, tool_name, args, **kwargs):
        self._log("handle_tool_call", tool=tool_name, args=args)
        if tool_name != "fact_store":
            return tool_error(f"unknown tool {tool_name}")
        if args.get("action") == "add":
            return json.dumps({"fact_id": self._store.add(args["content"]), "status": "added"})
        if args.get("action") == "search":
            return json.dumps({"results": self._store.search(args.get("query", ""))})
        return tool_error(f"unknown action {args.get('action')!r}")

    def prefetch(self, query, *, session_id=""):
        self._log("prefetch", query=query, session_id=session_id)
        hits = self._store.search(query, limit=int(self._config.get("max_recall", 3)))
        return "## Factbook\n" + "\n".join(f"- {h['content']}" for h in hits) if hits else ""

    def queue_prefetch(self, query, *, session_id=""):
        self._log("queue_prefetch", query=query, session_id=session_id)

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self._log("sync_turn", user=user_content, assistant=assistant_content, session_id=session_id,
                  roles=[m.get("role") for m in messages or []])

    def on_turn_start(self, turn_number, message, **kwargs):
        self._log("on_turn_start", turn_number=turn_number, message=message, platform=kwargs.get("platform"))

    def on_session_switch(self, new_session_id, *, parent_session_id="", reset=False, rewound=False, **kwargs):
        self._log("on_session_switch", new_session_id=new_session_id, parent_session_id=parent_session_id,
                  reset=reset, rewound=rewound)

    def on_pre_compress(self, messages):
        self._log("on_pre_compress", count=len(messages))
        return "factbook: the user keeps facts in fact_store"

    def on_memory_write(self, action, target, content, metadata=None):
        self._log("on_memory_write", action=action, target=target, content=content,
                  origin=(metadata or {}).get("write_origin"))

    def on_delegation(self, task, result, *, child_session_id="", **kwargs):
        self._log("on_delegation", task=task, result=result, child_session_id=child_session_id)

    def on_session_end(self, messages):
        self._log("on_session_end", count=len(messages))

    def shutdown(self):
        self._log("shutdown")

    def get_config_schema(self):
        return [
            {"key": "api_key", "description": "Factbook API key", "secret": True, "required": True,
             "env_var": "FACTBOOK_API_KEY", "url": "https://factbook.example/keys"},
            {"key": "mode", "description": "How recall matches", "choices": ["keyword", "all"], "default": "keyword"},
            {"key": "max_recall", "description": "Facts recalled per turn", "default": "3"},
        ]

    def save_config(self, values, hermes_home):
        from utils import atomic_json_write

        atomic_json_write(Path(hermes_home) / "factbook" / "config.json", values)


def register(ctx):
    ctx.register_memory_provider(FactbookProvider())
