"""The trigger both built-in engines share: a share of the window, reported prompt tokens only,
and the anti-thrashing guard that switches automatic compression off when it stops paying."""

from __future__ import annotations

from typing import Any

from hermes.kernel import ContextEngine

from .budget import setting, tail_budget, threshold_tokens
from .failures import CompressionGuard

__all__ = ["ThresholdEngine"]


class ThresholdEngine(ContextEngine):
    """Compress at ``compression.threshold`` of the window; keep ``target_ratio`` of it as the tail."""

    def __init__(self, **kwargs: Any) -> None:
        self.guard = CompressionGuard()
        super().__init__(**kwargs)

    def update_model(self, model: str, context_length: int) -> None:
        self.model = model
        self.context_length = context_length
        self.threshold_tokens = threshold_tokens(context_length, float(setting(self.config, "compression.threshold", 0.50)))
        ratio = float(setting(self.config, "compression.target_ratio", 0.20))
        self.tail_budget_tokens = tail_budget(self.threshold_tokens, ratio)
        self.protect_first_n = int(setting(self.config, "compression.protect_first_n", 3))

    def update_from_response(self, usage: Any) -> None:
        # Only what the provider reports it read counts; completion (reasoning) tokens never trigger.
        self.last_prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        self.last_completion_tokens = int(getattr(usage, "output_tokens", 0) or 0)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return self.guard.auto_enabled and tokens >= self.threshold_tokens

    def resume_automatic(self) -> None:
        """``/compress``: switch automatic compression back on after anti-thrashing stopped it."""
        self.guard.resume()

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self.guard.reset()
        self.system_note = None

    def get_status(self) -> dict[str, Any]:
        return {**super().get_status(), "auto_compression": self.guard.auto_enabled, "warning": self.guard.warning}
