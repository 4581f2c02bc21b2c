"""``window``: keep the first user message, a digest line and the last N turns."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hermes.kernel import ConfigKey, ContextEngine

__all__ = ["WindowEngine"]

DIGEST_PREFIX = "[window]"


def _tokens(messages: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(m, ensure_ascii=False, default=str)) for m in messages) // 4 + 1


class WindowEngine(ContextEngine):
    """A sliding window over whole user turns, with no model calls."""

    name = "window"
    config_keys = (ConfigKey("window.keep_turns", "int", 4, "User turns the window keeps whole.", min=1),)

    def update_model(self, model: str, context_length: int) -> None:
        super().update_model(model, context_length)
        self.threshold_tokens = int(context_length * 0.75)
        self.dropped_total = getattr(self, "dropped_total", 0)

    def update_from_response(self, usage: Any) -> None:
        self.last_prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        self.last_completion_tokens = int(getattr(usage, "output_tokens", 0) or 0)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return tokens >= self.threshold_tokens

    def _keep_turns(self) -> int:
        try:
            return max(1, int(self.config.get("window.keep_turns", 4))) if self.config is not None else 4
        except Exception:
            return 4

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[dict[str, Any]]:
        system = [messages[0]] if messages and messages[0].get("role") == "system" else []
        body = messages[len(system) :]
        if not body or body[0].get("role") != "user":
            return list(messages)
        first, rest = body[0], body[1:]
        if rest and str(rest[0].get("content") or "").startswith(DIGEST_PREFIX):
            rest = rest[1:]  # our own digest from the previous pass
        turn_starts = [i for i, m in enumerate(rest) if m.get("role") == "user"]
        keep = self._keep_turns()
        if len(turn_starts) <= keep:
            return list(messages)
        cut = turn_starts[-keep]
        dropped = rest[:cut]
        tools = Counter(
            (c.get("function") or {}).get("name", "tool") for m in dropped for c in (m.get("tool_calls") or ())
        )
        self.dropped_total += len(dropped)
        used = ", ".join(f"{name} ×{count}" for name, count in sorted(tools.items())) or "none"
        digest = {
            "role": "assistant",
            "content": f"{DIGEST_PREFIX} {self.dropped_total} earlier messages were dropped to save context "
            f"(tools used: {used}). The latest request follows.",
        }
        self.compression_count += 1
        return [*system, first, digest, *rest[cut:]]
