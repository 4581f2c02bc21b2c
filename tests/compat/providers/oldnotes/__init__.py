"""oldnotes: a provider written against an older Hermes Agent contract.

Its methods take no ``session_id``, ``messages`` or ``metadata``; it has no
``register(ctx)`` (the host instantiates its MemoryProvider subclass), and it
builds paths with ``os.path.join(hermes_home, ...)``.
"""

import json
import os
import re

from agent.memory_provider import MemoryProvider

WORD = re.compile(r"\w{5,}")


class OldNotes(MemoryProvider):
    name = "oldnotes"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.path = os.path.join(kwargs["hermes_home"], "oldnotes.jsonl")
        self.log = os.path.join(kwargs["hermes_home"], "oldnotes-calls.jsonl")

    def _record(self, **entry):
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")

    def get_tool_schemas(self):
        return []

    def on_turn_start(self, turn_number, message):
        self._record(call="on_turn_start", turn_number=turn_number)

    def prefetch(self, query):
        if not os.path.exists(self.path):
            return ""
        words = set(WORD.findall(query.lower()))
        with open(self.path, encoding="utf-8") as fh:
            notes = [json.loads(line) for line in fh if line.strip()]
        hits = [n["text"] for n in notes if words & set(WORD.findall(n["text"].lower()))]
        return "\n".join(hits)

    def sync_turn(self, user_content, assistant_content):
        self._record(call="sync_turn")
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"text": f"{user_content} -> {assistant_content}"}) + "\n")

    def on_memory_write(self, action, target, content):
        self._record(call="on_memory_write", action=action, target=target, content=content)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"text": f"remembered: {content}"}) + "\n")

    def on_session_end(self, messages):
        self._record(call="on_session_end", count=len(messages))
