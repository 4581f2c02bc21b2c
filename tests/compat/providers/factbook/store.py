"""A JSON file of facts, written atomically with the host's utils helper."""

import json
import os
import re
import threading

from utils import atomic_json_write

WORD = re.compile(r"\w{4,}")


class FactStore:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def all(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8") as fh:
            return json.load(fh)

    def add(self, content, category="general"):
        with self.lock:
            facts = self.all()
            facts.append({"id": len(facts) + 1, "content": content, "category": category})
            atomic_json_write(self.path, facts)
            return len(facts)

    def search(self, query, limit=3):
        words = set(WORD.findall(query.lower()))
        return [f for f in self.all() if words & set(WORD.findall(f["content"].lower()))][:limit]
