"""``sampling/createMessage``: MCP servers asking the kernel's model for a completion.

Off unless ``mcp.sampling.enabled`` (and then not even advertised to servers);
every request goes to the route of the turn that asked for the tool call (its
provider, credentials and model; ``mcp.sampling.model`` names another model on
that route), is capped (``max_tokens_cap``), rate-limited
(``requests_per_minute``) and recorded in the session's usage and the request
log like any model call of the agent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any

from hermes.kernel.tools import CLIENT_WRAPPER_SERVICE, ROUTE_SERVICE

from .settings import GlobalSettings

__all__ = ["Sampler"]

log = logging.getLogger(__name__)


def _text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type', 'content')} omitted]")
    return "\n".join(parts)


class Sampler:
    """Answers servers' sampling requests through the agent's model client."""

    def __init__(self, settings: GlobalSettings, config: Any, home: Any) -> None:
        self.settings = settings
        self.config = config
        self.home = home
        self.context: Any = None  # the ToolContext of the latest MCP call: store, session, host
        self._recent: deque[float] = deque()
        self._lock = threading.Lock()
        self._client: Any = None

    @property
    def enabled(self) -> bool:
        """Whether servers may sample at all (the capability is advertised only then)."""
        return self.settings.sampling_enabled

    def bind(self, context: Any) -> None:
        self.context = context

    def _route(self) -> tuple[Any, str, Any]:
        """The client, model and key lease to sample with: the running turn's route when there is one."""
        services = getattr(self.context, "services", {}) or {}
        route = services.get(ROUTE_SERVICE)
        if route is not None and hasattr(route.client, "complete"):
            # The agent's own client: already metered on a server, so never wrapped twice.
            return route.client, self.settings.sampling_model or route.model, getattr(route, "lease", None)
        client = self._model_client()
        wrap = services.get(CLIENT_WRAPPER_SERVICE)
        if wrap is not None:  # on a server: the key's meter is asked first and charged after
            client = wrap(client)
        return client, self.settings.sampling_model or str(self.config.get("model.name", "") or ""), None

    def _admit(self) -> None:
        limit = self.settings.sampling_requests_per_minute
        now = time.monotonic()
        with self._lock:
            while self._recent and now - self._recent[0] > 60:
                self._recent.popleft()
            if len(self._recent) >= limit:
                raise RuntimeError(f"sampling limit reached ({limit} requests per minute, mcp.sampling.requests_per_minute)")
            self._recent.append(now)

    def _model_client(self) -> Any:
        if self._client is None:
            from hermes.kernel import PluginHost, open_model_client

            services = getattr(self.context, "services", {}) or {}
            host = services.get("host") or PluginHost()
            self._client = open_model_client(host, self.config, self.home)
        return self._client

    def __call__(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        if not self.settings.sampling_enabled:
            raise RuntimeError("sampling is turned off (set mcp.sampling.enabled to true to allow it)")
        self._admit()
        from hermes.kernel import ModelRequest

        client, model, lease = self._route()
        messages: list[dict[str, Any]] = []
        if params.get("systemPrompt"):
            messages.append({"role": "system", "content": str(params["systemPrompt"])})
        for message in params.get("messages") or []:
            messages.append({"role": message.get("role", "user"), "content": _text(message.get("content"))})
        max_tokens = min(int(params.get("maxTokens") or self.settings.sampling_max_tokens_cap),
                         self.settings.sampling_max_tokens_cap)  # fmt: skip
        request = ModelRequest(model=model, messages=messages, max_tokens=max_tokens,
                               temperature=params.get("temperature"))  # fmt: skip
        response = client.complete(request, lease=lease) if lease is not None else client.complete(request)
        self._account(response, getattr(client, "name", ""), model)
        log.info("mcp server %r sampled %d tokens from %s", server, response.usage.output_tokens, model)
        finish = {"stop": "endTurn", "length": "maxTokens"}.get(response.finish_reason, response.finish_reason)
        return {"text": response.text, "model": response.model or model, "stop_reason": finish}

    def _account(self, response: Any, provider: str, model: str) -> None:
        context = self.context
        store = (getattr(context, "services", {}) or {}).get("store")
        session_id = getattr(context, "session_id", None)
        try:
            logs = getattr(self.home, "logs_dir", None)
            if logs is not None:  # the request log sees it like the agent's own calls (`hermes usage`)
                from hermes.kernel.usage import record_request

                record_request(logs / "requests.jsonl", session_id=session_id, provider=provider,
                               model=response.model or model, outcome="ok", usage=response.usage,
                               cost=response.cost)  # fmt: skip
            if store is not None and session_id is not None:
                store.record_usage(session_id, response.usage, response.cost)
        except Exception as exc:  # accounting must not fail the server's request
            log.warning("could not record MCP sampling usage: %s", exc)
